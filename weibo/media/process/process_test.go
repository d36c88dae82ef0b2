package process

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"runtime"
	"strings"
	"testing"

	"github.com/buckket/go-blurhash"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
)

// run processes data and fails the test on an error.
func run(t *testing.T, data []byte, l Limits) *Result {
	t.Helper()
	r, err := Process(context.Background(), data, l)
	if err != nil {
		t.Fatalf("Process: %v", err)
	}
	if len(r.Images) != 3 || r.Images[0].Variant != Thumb || r.Images[1].Variant != Middle || r.Images[2].Variant != Large {
		t.Fatalf("images: want THUMB, MIDDLE, LARGE; got %v", variantsOf(r))
	}
	for _, img := range r.Images {
		if len(img.Data) > MaxVariantBytes {
			t.Errorf("%s: %d bytes, over MaxVariantBytes", img.Variant, len(img.Data))
		}
		decoded(t, img)
		assertClean(t, img)
	}
	return r
}

func variantsOf(r *Result) []Variant {
	var vs []Variant
	for _, img := range r.Images {
		vs = append(vs, img.Variant)
	}
	return vs
}

// decoded decodes img with the decoder of its MIME type, checking its
// recorded size against the decoded one.
func decoded(t *testing.T, img Image) image.Image {
	t.Helper()
	var (
		m   image.Image
		err error
	)
	r := bytes.NewReader(img.Data)
	switch img.MIME {
	case "image/jpeg":
		m, err = jpeg.Decode(r)
	case "image/png":
		m, err = png.Decode(r)
	case "image/gif":
		m, err = gif.Decode(r)
	default:
		t.Fatalf("%s: MIME %q", img.Variant, img.MIME)
	}
	if err != nil {
		t.Fatalf("%s (%s): %v", img.Variant, img.MIME, err)
	}
	if b := m.Bounds(); b.Dx() != img.Width || b.Dy() != img.Height {
		t.Fatalf("%s: recorded %d × %d, decodes as %d × %d", img.Variant, img.Width, img.Height, b.Dx(), b.Dy())
	}
	return m
}

// leaks are byte strings no output may hold: the EXIF header, the shared
// fixture's camera and software, and what the tests hide in their inputs.
var leaks = []string{
	"Exif\x00\x00", "FixtureMaker", "Fixture Model 1", "fixture-software",
	"SECRET", "http://ns.adobe.com/xap/", "ICC_PROFILE", "<script", "PK\x03\x04",
}

// assertClean checks that img holds none of the leaks and, walking its
// structure, no block but the pixels' own: no APPn or COM segment and
// nothing after EOI in a JPEG; no chunk but IHDR, PLTE, tRNS, IDAT and
// IEND in a PNG; no extension but graphic control and NETSCAPE2.0 looping
// in a GIF.
func assertClean(t *testing.T, img Image) {
	t.Helper()
	d := img.Data
	for _, s := range leaks {
		if bytes.Contains(d, []byte(s)) {
			t.Errorf("%s holds %q", img.Variant, s)
		}
	}
	switch img.MIME {
	case "image/jpeg":
		i := 2
		for i+4 <= len(d) {
			m := d[i+1]
			if m == 0xDA {
				break
			}
			if m >= 0xE0 && m <= 0xEF || m == 0xFE {
				t.Errorf("%s: JPEG segment 0x%X (APPn or COM) at %d", img.Variant, m, i)
			}
			i += 2 + int(binary.BigEndian.Uint16(d[i+2:]))
		}
		if !bytes.HasSuffix(d, []byte{0xFF, 0xD9}) {
			t.Errorf("%s: bytes after the JPEG's EOI", img.Variant)
		}
	case "image/png":
		for i := 8; i+8 <= len(d); {
			n := int(binary.BigEndian.Uint32(d[i:]))
			switch typ := string(d[i+4 : i+8]); typ {
			case "IHDR", "PLTE", "tRNS", "IDAT":
			case "IEND":
				if i+12 != len(d) {
					t.Errorf("%s: bytes after the PNG's IEND", img.Variant)
				}
			default:
				t.Errorf("%s: PNG chunk %q", img.Variant, typ)
			}
			i += 12 + n
		}
	case "image/gif":
		checkGIFBlocks(t, img)
	}
}

func checkGIFBlocks(t *testing.T, img Image) {
	t.Helper()
	d := img.Data
	i := 13
	if d[10]&0x80 != 0 {
		i += 3 << (d[10]&7 + 1)
	}
	skip := func(j int) int {
		for d[j] != 0 {
			j += 1 + int(d[j])
		}
		return j + 1
	}
	for {
		switch d[i] {
		case 0x21:
			label := d[i+1]
			switch {
			case label == 0xF9:
			case label == 0xFF && string(d[i+3:i+14]) == "NETSCAPE2.0":
			default:
				t.Errorf("%s: GIF extension 0x%X", img.Variant, label)
			}
			i = skip(i + 2)
		case 0x2C:
			flags := d[i+9]
			i += 10
			if flags&0x80 != 0 {
				i += 3 << (flags&7 + 1)
			}
			i = skip(i + 1)
		case 0x3B:
			if i+1 != len(d) {
				t.Errorf("%s: bytes after the GIF's trailer", img.Variant)
			}
			return
		default:
			t.Fatalf("%s: GIF block 0x%X at %d", img.Variant, d[i], i)
		}
	}
}

// wantError checks that err is a *weibo.Error with code on field "file"
// whose message holds each of words.
func wantError(t *testing.T, err error, code string, words ...string) {
	t.Helper()
	e, ok := errors.AsType[*weibo.Error](err)
	if !ok {
		t.Fatalf("want a %s *weibo.Error, got %v", code, err)
	}
	if e.Code != code || e.Field != "file" {
		t.Fatalf("want %s on file, got %s on %q: %s", code, e.Code, e.Field, e.Message)
	}
	for _, w := range words {
		if !strings.Contains(e.Message, w) {
			t.Errorf("message %q lacks %q", e.Message, w)
		}
	}
}

func TestFormatsByContent(t *testing.T) {
	opaque := detailed(300, 200, 1)
	for _, c := range []struct {
		format string
		data   []byte
		w, h   int
	}{
		{"jpeg", encodeJPEG(t, opaque, 90), 300, 200},
		{"png", encodePNG(t, opaque), 300, 200},
		{"gif", encodeGIF(t, 300, 200, solidFrame(image.Rect(0, 0, 300, 200), color.RGBA{200, 10, 10, 255})), 300, 200},
		{"webp", webpSolid(300, 200, color.NRGBA{10, 200, 10, 255}), 300, 200},
	} {
		t.Run(c.format, func(t *testing.T) {
			r := run(t, c.data, Limits{})
			if r.Format != c.format {
				t.Fatalf("format: want %s, got %s", c.format, r.Format)
			}
			large := r.Images[2]
			if large.Width != c.w || large.Height != c.h {
				t.Errorf("LARGE: want %d × %d, got %d × %d", c.w, c.h, large.Width, large.Height)
			}
			for _, img := range r.Images {
				if img.MIME != "image/jpeg" {
					t.Errorf("%s of an opaque %s: want image/jpeg, got %s", img.Variant, c.format, img.MIME)
				}
			}
		})
	}
}

func TestWebPColours(t *testing.T) {
	// The hand-written VP8L stream decodes to its colour: the test of the
	// fixture itself, and of the pixels surviving the pipeline.
	r := run(t, webpSolid(40, 30, color.NRGBA{10, 200, 10, 255}), Limits{})
	got := color.NRGBAModel.Convert(decoded(t, r.Images[1]).At(20, 15)).(color.NRGBA)
	if got.R > 40 || got.G < 170 || got.B > 40 {
		t.Errorf("green WebP: MIDDLE's centre is %v", got)
	}
	r = run(t, webpSolid(40, 30, color.NRGBA{0, 0, 200, 128}), Limits{})
	for _, img := range r.Images {
		if img.MIME != "image/png" {
			t.Fatalf("%s of a translucent WebP: want image/png, got %s", img.Variant, img.MIME)
		}
		a := color.NRGBAModel.Convert(decoded(t, img).At(img.Width/2, img.Height/2)).(color.NRGBA).A
		if a < 120 || a > 136 {
			t.Errorf("%s: alpha %d, want about 128", img.Variant, a)
		}
	}
}

func TestRefusesOtherFormats(t *testing.T) {
	m := detailed(40, 30, 2)
	var bmpData, tiffData bytes.Buffer
	if err := bmp.Encode(&bmpData, m); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&tiffData, m, nil); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty": nil,
		"text":  []byte("just some words"),
		"html":  []byte("<!doctype html><script>alert(1)</script>"),
		"svg":   []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
		"pdf":   []byte("%PDF-1.7\n"),
		"zip":   []byte("PK\x03\x04rest of an archive"),
		// Registered with image.Decode by golang.org/x/image, which the
		// package imports: refused all the same.
		"bmp":  bmpData.Bytes(),
		"tiff": tiffData.Bytes(),
		// A RIFF that is not a WebP (a WAVE).
		"wav": []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Process(context.Background(), data, Limits{})
			wantError(t, err, weibo.CodeBadUserInput, "JPEG, PNG, GIF or WebP")
		})
	}
}

func TestRefusesWhatDoesNotDecode(t *testing.T) {
	jpg := encodeJPEG(t, detailed(64, 64, 3), 90)
	for name, c := range map[string]struct {
		data []byte
		word string
	}{
		"truncated JPEG":  {jpg[:len(jpg)/2], "not a valid JPEG"},
		"JPEG magic only": {[]byte{0xFF, 0xD8, 0xFF, 0xE0}, "not a valid JPEG"},
		// A GIF signature and screen, then a page (the HTML-in-GIF
		// polyglot).
		"GIF then HTML": {[]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00<html><script>alert(1)</script></html>"), "not a valid GIF"},
		// A signature alone: its "screen" is read from the page's first
		// bytes ("<h", "tm": 26,684 × 28,020), too many pixels to try.
		"GIF signature then HTML": {[]byte("GIF89a<html><script>alert(1)</script></html>"), ""},
		"PNG signature":           {[]byte("\x89PNG\r\n\x1a\nrest"), "not a valid PNG"},
		"WebP header":             {[]byte("RIFF\x10\x00\x00\x00WEBPVP8L\x04\x00\x00\x00\x00\x00\x00\x00"), "not a valid WebP"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Process(context.Background(), c.data, Limits{})
			if c.word == "" {
				wantError(t, err, weibo.CodePayloadTooLarge)
				return
			}
			wantError(t, err, weibo.CodeBadUserInput, c.word)
		})
	}
}

func TestMaxBytes(t *testing.T) {
	data := encodeJPEG(t, detailed(200, 200, 4), 90)
	_, err := Process(context.Background(), data, Limits{MaxBytes: int64(len(data)) - 1})
	wantError(t, err, weibo.CodePayloadTooLarge, "at most")
	run(t, data, Limits{MaxBytes: int64(len(data))})
	big := make([]byte, DefaultMaxBytes+1)
	copy(big, data)
	_, err = Process(context.Background(), big, Limits{})
	wantError(t, err, weibo.CodePayloadTooLarge, "at most 20 MB")
}

func TestPixelBombRefusedFromHeader(t *testing.T) {
	bomb := pngBomb(t, 100_000, 100_000) // 10 gigapixels, 40 GB decoded
	if len(bomb) > 4096 {
		t.Fatalf("the bomb is %d bytes, meant to be a few hundred", len(bomb))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Process(context.Background(), bomb, Limits{})
	runtime.ReadMemStats(&after)
	wantError(t, err, weibo.CodePayloadTooLarge, "100000 × 100000", "50 megapixels")
	// Decoding would allocate 40 GB; the refusal reads 33 bytes of header.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the bomb allocated %d bytes", grew)
	}

	// A JPEG whose frame header declares 65,535 × 65,535 pixels.
	jpg := encodeJPEG(t, detailed(16, 16, 5), 90)
	sof := bytes.Index(jpg, []byte{0xFF, 0xC0})
	binary.BigEndian.PutUint16(jpg[sof+5:], 65535)
	binary.BigEndian.PutUint16(jpg[sof+7:], 65535)
	_, err = Process(context.Background(), jpg, Limits{})
	wantError(t, err, weibo.CodePayloadTooLarge, "65535 × 65535")
}

func TestMaxPixelsBoundary(t *testing.T) {
	ok := encodePNG(t, detailed(100, 100, 6))
	run(t, ok, Limits{MaxPixels: 100 * 100})
	over := encodePNG(t, detailed(101, 100, 6))
	_, err := Process(context.Background(), over, Limits{MaxPixels: 100 * 100})
	wantError(t, err, weibo.CodePayloadTooLarge, "101 × 100")
}

func TestGIFFramesBounded(t *testing.T) {
	screen := image.Rect(0, 0, 100, 100)
	red, blue := color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}
	one := encodeGIF(t, 100, 100, solidFrame(screen, red))
	run(t, one, Limits{MaxPixels: 15_000})
	two := encodeGIF(t, 100, 100, solidFrame(screen, red), solidFrame(screen, blue))
	_, err := Process(context.Background(), two, Limits{MaxPixels: 15_000})
	wantError(t, err, weibo.CodePayloadTooLarge, "2 frames", "20000 pixels")

	var tiny []*image.Paletted
	for range maxFrames + 1 {
		tiny = append(tiny, solidFrame(image.Rect(0, 0, 1, 1), red))
	}
	_, err = Process(context.Background(), encodeGIF(t, 1, 1, tiny...), Limits{})
	wantError(t, err, weibo.CodePayloadTooLarge, "1001 frames")
}

func TestFixtureOrientedAndStripped(t *testing.T) {
	data := testenv.Fixture(t, testenv.PhoneJPEG)
	for _, s := range leaks[:4] {
		if !bytes.Contains(data, []byte(s)) {
			t.Fatalf("the fixture lacks %q: the leak check would prove nothing", s)
		}
	}
	r := run(t, data, Limits{})
	want := map[Variant][2]int{Thumb: {180, 180}, Middle: {480, 640}, Large: {480, 640}}
	for _, img := range r.Images {
		if got := [2]int{img.Width, img.Height}; got != want[img.Variant] {
			t.Errorf("%s: want %v, got %v", img.Variant, want[img.Variant], got)
		}
		if img.MIME != "image/jpeg" {
			t.Errorf("%s: want image/jpeg, got %s", img.Variant, img.MIME)
		}
	}
}

func TestOrientationDirection(t *testing.T) {
	red, blue := color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 0, 255, 255}
	plain := encodeJPEG(t, halves(64, 32, red, blue), 95)
	// Where the red (left) half shows after each orientation, and the
	// shown size.
	for _, c := range []struct {
		o    int
		w, h int
		at   image.Point // a pixel that shows red
	}{
		{1, 64, 32, image.Pt(8, 16)},
		{3, 64, 32, image.Pt(56, 16)},
		{6, 32, 64, image.Pt(16, 8)},  // a quarter turn clockwise: left goes up
		{8, 32, 64, image.Pt(16, 56)}, // counter-clockwise: left goes down
		{2, 64, 32, image.Pt(56, 16)}, // mirrored
	} {
		// The orientation behind an XMP APP1, as some editors write it,
		// and the EXIF with a camera make that must not survive.
		xmp := segment(0xE1, []byte("http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta>SECRET</x:xmpmeta>"))
		data := withSegments(plain, xmp, exifSegment(c.o, "SECRET camera"))
		r := run(t, data, Limits{})
		large := r.Images[2]
		if large.Width != c.w || large.Height != c.h {
			t.Fatalf("orientation %d: want %d × %d, got %d × %d", c.o, c.w, c.h, large.Width, large.Height)
		}
		got := color.NRGBAModel.Convert(decoded(t, large).At(c.at.X, c.at.Y)).(color.NRGBA)
		if got.R < 200 || got.B > 60 {
			t.Errorf("orientation %d: %v shows %v, want red", c.o, c.at, got)
		}
	}
}

func TestMetadataAndPolyglotsDropped(t *testing.T) {
	jpg := encodeJPEG(t, detailed(300, 200, 7), 90)
	icc := segment(0xE2, append([]byte("ICC_PROFILE\x00\x01\x01"), make([]byte, 64)...))
	com := segment(0xFE, []byte("SECRET comment"))
	gps := exifSegment(1, "SECRET GPS 31N 121E")
	// A JPEG with an archive and a page appended: a polyglot many
	// viewers and unzip tools both accept.
	polyglot := append(withSegments(jpg, gps, icc, com), []byte("PK\x03\x04SECRET.txt<script>alert(1)</script>")...)
	run(t, polyglot, Limits{})

	text := pngChunk("tEXt", []byte("Comment\x00SECRET"))
	exif := pngChunk("eXIf", []byte("MM\x00\x2a\x00\x00\x00\x08SECRET"))
	png := withPNGChunks(encodePNG(t, detailed(300, 200, 8)), text, exif)
	run(t, append(png, "<script>alert(1)</script>"...), Limits{})

	screen := image.Rect(0, 0, 120, 80)
	anim := encodeGIF(t, 120, 80, solidFrame(screen, color.RGBA{255, 0, 0, 255}), solidFrame(screen, color.RGBA{0, 255, 0, 255}))
	run(t, withGIFExtensions(anim, "SECRET comment <script>", "<x:xmpmeta>SECRET</x:xmpmeta>"), Limits{})
}

func TestVariantSizes(t *testing.T) {
	for _, c := range []struct {
		name                 string
		w, h                 int
		thumb, middle, large [2]int
	}{
		{"landscape", 2400, 1800, [2]int{180, 180}, [2]int{690, 518}, [2]int{2048, 1536}},
		{"portrait", 1000, 3000, [2]int{180, 180}, [2]int{230, 690}, [2]int{683, 2048}},
		{"between", 1000, 800, [2]int{180, 180}, [2]int{690, 552}, [2]int{1000, 800}},
		{"small", 100, 50, [2]int{50, 50}, [2]int{100, 50}, [2]int{100, 50}},
		// LARGE's and MIDDLE's short sides are under 180: THUMB comes from
		// the picture itself.
		{"panorama", 6000, 150, [2]int{150, 150}, [2]int{690, 17}, [2]int{2048, 51}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, encodeJPEG(t, detailed(c.w, c.h, 9), 85), Limits{})
			for i, want := range [][2]int{c.thumb, c.middle, c.large} {
				img := r.Images[i]
				if got := [2]int{img.Width, img.Height}; got != want {
					t.Errorf("%s: want %v, got %v", img.Variant, want, got)
				}
			}
		})
	}
}

func TestTransparencyKeptAsPNG(t *testing.T) {
	m := halves(400, 300, color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 0, 255, 0})
	r := run(t, encodePNG(t, m), Limits{})
	for _, img := range r.Images {
		if img.MIME != "image/png" {
			t.Fatalf("%s: want image/png, got %s", img.Variant, img.MIME)
		}
		d := decoded(t, img)
		if _, _, _, a := d.At(img.Width-1, img.Height/2).RGBA(); a != 0 {
			t.Errorf("%s: the right edge has alpha %d, want 0", img.Variant, a)
		}
		if _, _, _, a := d.At(0, img.Height/2).RGBA(); a != 0xffff {
			t.Errorf("%s: the left edge has alpha %d, want opaque", img.Variant, a)
		}
	}
}

func TestAnimatedGIF(t *testing.T) {
	colours := []color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}}
	frames := func(r image.Rectangle) []*image.Paletted {
		var fs []*image.Paletted
		for _, c := range colours {
			fs = append(fs, solidFrame(r, c))
		}
		return fs
	}
	for _, c := range []struct {
		name   string
		w, h   int
		lw, lh int
	}{
		{"kept size", 300, 200, 300, 200},
		{"resized", 2400, 100, 2048, 85},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := encodeGIF(t, c.w, c.h, frames(image.Rect(0, 0, c.w, c.h))...)
			r := run(t, data, Limits{})
			large := r.Images[2]
			if large.MIME != "image/gif" || large.Width != c.lw || large.Height != c.lh {
				t.Fatalf("LARGE: want an image/gif of %d × %d, got %s %d × %d", c.lw, c.lh, large.MIME, large.Width, large.Height)
			}
			g, err := gif.DecodeAll(bytes.NewReader(large.Data))
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Image) != 3 || g.LoopCount != 0 || g.Delay[1] != 10 {
				t.Fatalf("LARGE: want 3 frames looping forever at 10 cs, got %d frames, loop %d, delays %v", len(g.Image), g.LoopCount, g.Delay)
			}
			for i, f := range g.Image {
				got := color.RGBAModel.Convert(f.At(f.Rect.Dx()/2, f.Rect.Dy()/2))
				if got != colours[i] {
					t.Errorf("frame %d shows %v, want %v", i, got, colours[i])
				}
			}
			// THUMB and MIDDLE: the first frame, still.
			for _, img := range r.Images[:2] {
				if img.MIME == "image/gif" {
					t.Errorf("%s is a GIF, want the first frame still", img.Variant)
				}
				got := color.RGBAModel.Convert(decoded(t, img).At(img.Width/2, img.Height/2)).(color.RGBA)
				if got.R < 220 || got.G > 40 || got.B > 40 {
					t.Errorf("%s shows %v, want the first frame's red", img.Variant, got)
				}
			}
		})
	}
}

func TestAnimationOverLimitsStoredAsFirstFrame(t *testing.T) {
	// Frames of noise over 256 colours hardly compress: eight of 1200 ×
	// 1200 pixels encode to more than MaxVariantBytes.
	pal := make(color.Palette, 256)
	for i := range pal {
		pal[i] = color.RGBA{uint8(i), uint8(i * 7), uint8(i * 13), 255}
	}
	var fs []*image.Paletted
	for k := range 8 {
		f := image.NewPaletted(image.Rect(0, 0, 1200, 1200), pal)
		copy(f.Pix, detailed(1200, 1200, uint64(k)).Pix) // noisy bytes as indices
		fs = append(fs, f)
	}
	data := encodeGIF(t, 1200, 1200, fs...)
	if len(data) <= MaxVariantBytes || len(data) > DefaultMaxBytes {
		t.Fatalf("the animation is %d bytes; the test needs more than MaxVariantBytes and at most DefaultMaxBytes", len(data))
	}
	r := run(t, data, Limits{})
	if large := r.Images[2]; large.MIME != "image/jpeg" || large.Width != 1200 {
		t.Errorf("LARGE: want the first frame as a 1200-pixel JPEG, got %s of %d × %d", large.MIME, large.Width, large.Height)
	}

	// Resizing whole frames of a screen wider than LARGE: three 1 × 1
	// frames on a 2100 × 10 screen become three 2048 × 10 frames, more
	// pixels together than the limit allows.
	tiny := []*image.Paletted{
		solidFrame(image.Rect(0, 0, 1, 1), color.RGBA{255, 0, 0, 255}),
		solidFrame(image.Rect(1, 0, 2, 1), color.RGBA{0, 255, 0, 255}),
		solidFrame(image.Rect(2, 0, 3, 1), color.RGBA{0, 0, 255, 255}),
	}
	r = run(t, encodeGIF(t, 2100, 10, tiny...), Limits{MaxPixels: 30_000})
	if large := r.Images[2]; large.MIME == "image/gif" || large.Width != 2048 {
		t.Errorf("LARGE: want the first frame still, 2048 wide, got %s of %d × %d", large.MIME, large.Width, large.Height)
	}
}

func TestBlurhashDecodes(t *testing.T) {
	r := run(t, encodeJPEG(t, halves(320, 240, color.NRGBA{230, 20, 20, 255}, color.NRGBA{230, 20, 20, 255}), 90), Limits{})
	x, y, err := blurhash.Components(r.Blurhash)
	if err != nil || x != blurX || y != blurY {
		t.Fatalf("blurhash %q: components %d × %d, %v", r.Blurhash, x, y, err)
	}
	m, err := blurhash.Decode(r.Blurhash, 32, 24, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := color.RGBAModel.Convert(m.At(16, 12)).(color.RGBA)
	if got.R < 200 || got.G > 50 || got.B > 50 {
		t.Errorf("the blurhash of a red picture decodes to %v", got)
	}
}

func TestWaitsForDecodeBudgetHonouringContext(t *testing.T) {
	data := encodeJPEG(t, detailed(64, 64, 10), 90)
	// Hold the whole budget: Process must wait, and give up with ctx.
	if err := decodes.Acquire(context.Background(), decodeBudget); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Process(ctx, data, Limits{})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Process ran with the budget taken: %v", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	decodes.Release(decodeBudget)
	run(t, data, Limits{})
}
