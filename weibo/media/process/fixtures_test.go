package process

// The test pictures are made here, from pixels, with the standard
// encoders; what an encoder cannot write (EXIF, comments, a WebP, a bomb's
// header) is spliced in as bytes written by hand from the formats' specs.

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"testing"
)

// detailed returns a w × h opaque picture with gradients, stripes and
// noise, so that encoders and resamplers have work to do.
func detailed(w, h int, seed uint64) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for y := range h {
		row := m.Pix[y*m.Stride:]
		for x := range w {
			n := uint8(r.Uint32() & 0x1f)
			row[4*x] = uint8(x*255/w) + n
			row[4*x+1] = uint8(y*255/h) ^ uint8((x/16+y/16)%2*0x40) + n
			row[4*x+2] = uint8((x+y)&0xff) + n
			row[4*x+3] = 0xff
		}
	}
	return m
}

// halves returns a w × h picture whose left half is left and right half
// is right.
func halves(w, h int, left, right color.Color) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			if x < w/2 {
				m.Set(x, y, left)
			} else {
				m.Set(x, y, right)
			}
		}
	}
	return m
}

func encodeJPEG(t testing.TB, m image.Image, quality int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// segment is a JPEG marker segment: 0xFF, marker, a two-byte length
// (counting itself) and body.
func segment(marker byte, body []byte) []byte {
	s := []byte{0xFF, marker, 0, 0}
	binary.BigEndian.PutUint16(s[2:], uint16(len(body)+2))
	return append(s, body...)
}

// exifSegment returns an APP1 Exif segment whose IFD0 holds the
// orientation o and, when camera is not "", a Make tag (ASCII) with it.
func exifSegment(o int, camera string) []byte {
	// TIFF, big-endian: header, IFD0 at 8 with its entries, next IFD 0,
	// then the Make string.
	entries := 1
	if camera != "" {
		entries = 2
	}
	t := []byte("MM\x00\x2a\x00\x00\x00\x08")
	t = binary.BigEndian.AppendUint16(t, uint16(entries))
	valueAt := 8 + 2 + 12*entries + 4
	if camera != "" {
		t = binary.BigEndian.AppendUint16(t, 0x010F) // Make
		t = binary.BigEndian.AppendUint16(t, 2)      // ASCII
		t = binary.BigEndian.AppendUint32(t, uint32(len(camera)+1))
		t = binary.BigEndian.AppendUint32(t, uint32(valueAt))
	}
	t = binary.BigEndian.AppendUint16(t, 0x0112) // Orientation
	t = binary.BigEndian.AppendUint16(t, 3)      // SHORT
	t = binary.BigEndian.AppendUint32(t, 1)
	t = binary.BigEndian.AppendUint16(t, uint16(o))
	t = append(t, 0, 0)
	t = append(t, 0, 0, 0, 0) // no next IFD
	if camera != "" {
		t = append(append(t, camera...), 0)
	}
	return segment(0xE1, append([]byte("Exif\x00\x00"), t...))
}

// withSegments inserts segments right after a JPEG's SOI marker.
func withSegments(jpg []byte, segs ...[]byte) []byte {
	out := append([]byte{}, jpg[:2]...)
	for _, s := range segs {
		out = append(out, s...)
	}
	return append(out, jpg[2:]...)
}

// pngChunk returns a PNG chunk: length, type, data, CRC of type and data.
func pngChunk(typ string, data []byte) []byte {
	c := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	c = append(append(c, typ...), data...)
	return binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(c[4:]))
}

// pngBomb returns a PNG of a few hundred bytes declaring w × h RGBA
// pixels: a valid signature and IHDR, one IDAT of a little compressed
// data, IEND.
func pngBomb(t testing.TB, w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0) // 8 bits, RGBA, deflate, no filter, no interlace
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := zw.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, pngChunk("IHDR", ihdr)...)
	out = append(out, pngChunk("IDAT", z.Bytes())...)
	return append(out, pngChunk("IEND", nil)...)
}

// withPNGChunks inserts chunks right after a PNG's IHDR chunk.
func withPNGChunks(p []byte, chunks ...[]byte) []byte {
	const afterIHDR = 8 + 4 + 4 + 13 + 4
	out := append([]byte{}, p[:afterIHDR]...)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return append(out, p[afterIHDR:]...)
}

// encodeGIF encodes frames (each its own palette) as an animation looping
// forever, 10 centiseconds a frame.
func encodeGIF(t testing.TB, w, h int, frames ...*image.Paletted) []byte {
	t.Helper()
	g := &gif.GIF{Config: image.Config{Width: w, Height: h}, LoopCount: 0}
	for _, f := range frames {
		g.Image = append(g.Image, f)
		g.Delay = append(g.Delay, 10)
		g.Disposal = append(g.Disposal, gif.DisposalNone)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// solidFrame returns a frame of r filled with c, its palette c and
// transparency.
func solidFrame(r image.Rectangle, c color.Color) *image.Paletted {
	f := image.NewPaletted(r, color.Palette{c, color.Transparent})
	return f // every pixel is index 0: c
}

// withGIFExtensions inserts a comment extension and an application
// extension (an XMP block, as image editors write one) before a GIF's
// trailer.
func withGIFExtensions(g []byte, comment, xmp string) []byte {
	out := append([]byte{}, g[:len(g)-1]...) // without the trailer 0x3B
	out = append(out, 0x21, 0xFE)
	out = append(subBlocks(out, comment), 0)
	out = append(out, 0x21, 0xFF, 11)
	out = append(out, "XMP DataXMP"...)
	out = append(subBlocks(out, xmp), 0)
	return append(out, 0x3B)
}

// subBlocks appends s to b as GIF data sub-blocks (without the
// terminator).
func subBlocks(b []byte, s string) []byte {
	for len(s) > 0 {
		n := min(len(s), 255)
		b = append(append(b, byte(n)), s[:n]...)
		s = s[n:]
	}
	return b
}

// webpSolid returns a lossless WebP (RFC 9649, VP8L) of w × h pixels all
// of colour c, written bit by bit from the spec: the smallest valid
// bitstream, with no transform, no colour cache, no meta prefix codes and
// five "simple" prefix codes of one symbol each (green, red, blue, alpha,
// distance). A one-symbol code takes zero bits per use, so the pixel data
// is empty and every pixel decodes to c.
func webpSolid(w, h int, c color.NRGBA) []byte {
	var bits bitWriter
	bits.write(0x2f, 8) // VP8L signature
	bits.write(uint32(w-1), 14)
	bits.write(uint32(h-1), 14)
	alpha := uint32(0)
	if c.A != 0xff {
		alpha = 1
	}
	bits.write(alpha, 1)
	bits.write(0, 3) // version
	bits.write(0, 1) // no transform
	bits.write(0, 1) // no colour cache
	bits.write(0, 1) // no meta prefix codes
	for _, symbol := range []uint8{c.G, c.R, c.B, c.A, 0} {
		bits.write(1, 1) // simple code
		bits.write(0, 1) // one symbol
		bits.write(1, 1) // of 8 bits
		bits.write(uint32(symbol), 8)
	}
	data := bits.bytes()
	out := []byte("RIFF")
	padded := len(data) + len(data)%2
	out = binary.LittleEndian.AppendUint32(out, uint32(4+8+padded))
	out = append(out, "WEBPVP8L"...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(data)))
	out = append(out, data...)
	if len(data)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// bitWriter writes bits least significant first, as VP8L reads them.
type bitWriter struct {
	buf  []byte
	used uint // bits used of the last byte
}

func (b *bitWriter) write(v uint32, n uint) {
	for i := range n {
		if b.used == 0 {
			b.buf = append(b.buf, 0)
		}
		b.buf[len(b.buf)-1] |= byte(v>>i&1) << b.used
		b.used = (b.used + 1) % 8
	}
}

func (b *bitWriter) bytes() []byte { return b.buf }
