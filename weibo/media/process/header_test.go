package process

import (
	"bytes"
	"image"
	"image/color"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

func TestProgressiveJPEGWeighsMore(t *testing.T) {
	baseline := encodeJPEG(t, detailed(100, 100, 11), 90)
	// The same header with its frame marked progressive (SOF2): only the
	// header is read here.
	progressive := bytes.Clone(baseline)
	progressive[bytes.Index(progressive, []byte{0xFF, 0xC0})+1] = 0xC2
	if jpegProgressive(baseline) || !jpegProgressive(progressive) {
		t.Fatal("jpegProgressive does not tell SOF0 from SOF2")
	}
	b, err := readHeader(formatJPEG, baseline, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	p, err := readHeader(formatJPEG, progressive, Limits{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if p.weight <= b.weight {
		t.Errorf("progressive weighs %d, baseline %d: the coefficients' memory is not counted", p.weight, b.weight)
	}
}

func TestGIFFramesCounted(t *testing.T) {
	red := color.RGBA{255, 0, 0, 255}
	data := encodeGIF(t, 50, 40,
		solidFrame(image.Rect(0, 0, 50, 40), red),
		solidFrame(image.Rect(5, 5, 15, 25), red),
		solidFrame(image.Rect(0, 0, 1, 1), red))
	data = withGIFExtensions(data, "a comment", "an XMP packet")
	frames, area := gifFrames(data)
	if frames != 3 || area != 50*40+10*20+1 {
		t.Errorf("want 3 frames of 2201 pixels, got %d of %d", frames, area)
	}
}

// FuzzHeaders feeds the header readers, which walk attacker-supplied
// offsets before any decoder has vetted the file, every prefix and
// corruption the fuzzer finds; under go test, the seeds below and their
// truncations. None may panic.
func FuzzHeaders(f *testing.F) {
	fixtureData := testenv.Fixture(f, testenv.PhoneJPEG)
	red := color.RGBA{255, 0, 0, 255}
	seeds := [][]byte{
		fixtureData[:600],
		withSegments(encodeJPEG(f, detailed(16, 16, 12), 90), exifSegment(6, "camera")),
		withGIFExtensions(encodeGIF(f, 8, 8, solidFrame(image.Rect(0, 0, 8, 8), red)), "c", "x"),
		pngBomb(f, 100_000, 100_000),
		webpSolid(3, 2, color.NRGBA{1, 2, 3, 4}),
	}
	for _, s := range seeds {
		for n := 0; n <= len(s); n += max(1, len(s)/64) {
			f.Add(s[:n])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		exifOrientation(data)
		jpegProgressive(data)
		gifFrames(data)
		if fm := sniff(data); fm != "" {
			_, _ = readHeader(fm, data, Limits{MaxPixels: 1 << 16}.withDefaults())
		}
	})
}
