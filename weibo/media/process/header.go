package process

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/webp"

	"github.com/weibohbase/gateway/weibo"
)

// The formats Process accepts, as Result.Format names them.
const (
	formatJPEG = "jpeg"
	formatPNG  = "png"
	formatGIF  = "gif"
	formatWebP = "webp"
)

// sniff names data's format from its magic bytes, or "" for none of the
// accepted ones.
func sniff(data []byte) string {
	switch {
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return formatJPEG
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return formatPNG
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return formatGIF
	case len(data) >= 16 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP" &&
		(string(data[12:16]) == "VP8 " || string(data[12:16]) == "VP8L" || string(data[12:16]) == "VP8X"):
		return formatWebP
	}
	return ""
}

// header is what Process learns of a file before decoding it.
type header struct {
	format        string
	width, height int
	frames        int   // a GIF's frames; 1 otherwise
	weight        int64 // the decode's estimated memory in bytes
}

// readHeader reads f's header of data (its dimensions, and a GIF's
// frames) and checks them against l, allocating nothing in proportion to
// the picture.
func readHeader(f string, data []byte, l Limits) (*header, error) {
	var (
		cfg image.Config
		err error
	)
	r := bytes.NewReader(data)
	switch f {
	case formatJPEG:
		cfg, err = jpeg.DecodeConfig(r)
	case formatPNG:
		cfg, err = png.DecodeConfig(r)
	case formatGIF:
		cfg, err = gif.DecodeConfig(r)
	case formatWebP:
		cfg, err = webp.DecodeConfig(r)
	}
	if err != nil {
		return nil, notValid(f, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, weibo.BadInput(field, "the file is a %s picture of %d × %d pixels; it has none to show", name(f), cfg.Width, cfg.Height)
	}
	h := &header{format: f, width: cfg.Width, height: cfg.Height, frames: 1}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if pixels > l.MaxPixels {
		return nil, tooLarge("the picture is %d × %d pixels (%s); at most %s are accepted",
			cfg.Width, cfg.Height, megapixels(pixels), megapixels(l.MaxPixels))
	}
	// Decoded bytes per pixel, then the working copies of orientation and
	// resizing (NRGBA, 4 bytes per pixel of the largest intermediate).
	h.weight = pixels * (int64(bytesPerPixel(cfg.ColorModel)) + 4)
	if f == formatJPEG && jpegProgressive(data) {
		h.weight += pixels * 4 * int64(bytesPerPixel(cfg.ColorModel))
	}
	if f == formatGIF {
		frames, area := gifFrames(data)
		if frames > maxFrames {
			return nil, tooLarge("the GIF has %d frames; at most %d are accepted", frames, maxFrames)
		}
		if area > l.MaxPixels {
			return nil, tooLarge("the GIF's %d frames hold %s; at most %s are accepted",
				frames, megapixels(area), megapixels(l.MaxPixels))
		}
		h.frames = max(frames, 1)
		// Paletted frames (1 byte per pixel), a compositing canvas and its
		// resized copy (NRGBA), and the LARGE frames' output.
		h.weight = area + pixels*8 + min(area, l.MaxPixels)
	}
	return h, nil
}

// bytesPerPixel estimates the decoded size of a pixel of model. A JPEG's
// chroma subsampling is not in its config, so YCbCr counts as 4:4:4.
func bytesPerPixel(m color.Model) int {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.NYCbCrAModel, color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

// gifFrames walks a GIF's blocks without decompressing any and returns its
// frames and the sum of their areas in pixels. It stops at the trailer or
// at the first malformed block, counting what it saw; the decoder judges
// the rest.
func gifFrames(data []byte) (frames int, area int64) {
	const lsd = 13 // header and logical screen descriptor
	if len(data) < lsd {
		return 0, 0
	}
	i := lsd
	if data[10]&0x80 != 0 {
		i += 3 << (data[10]&7 + 1)
	}
	// skipSubBlocks returns the index past the sub-blocks starting at j
	// (each a length byte and that many bytes, ended by a zero), or -1.
	skipSubBlocks := func(j int) int {
		for j < len(data) {
			n := int(data[j])
			j++
			if n == 0 {
				return j
			}
			j += n
		}
		return -1
	}
	for i < len(data) {
		switch data[i] {
		case 0x21: // extension: label, then sub-blocks
			if i+2 > len(data) {
				return frames, area
			}
			i = skipSubBlocks(i + 2)
		case 0x2C: // image descriptor, local color table, LZW code size, data
			if i+10 > len(data) {
				return frames, area
			}
			w := binary.LittleEndian.Uint16(data[i+5:])
			h := binary.LittleEndian.Uint16(data[i+7:])
			frames++
			area += int64(w) * int64(h)
			flags := data[i+9]
			i += 10
			if flags&0x80 != 0 {
				i += 3 << (flags&7 + 1)
			}
			i = skipSubBlocks(i + 1)
		default: // the trailer (0x3B) or garbage
			return frames, area
		}
		if i < 0 {
			return frames, area
		}
	}
	return frames, area
}

// jpegSegments calls fn with each marker segment of a JPEG before its
// image data (the marker and the segment's body), until fn returns false,
// the start of scan or anything malformed.
func jpegSegments(data []byte, fn func(marker byte, body []byte) bool) {
	i := 2 // past SOI
	for i+4 <= len(data) {
		if data[i] != 0xFF {
			return
		}
		marker := data[i+1]
		switch {
		case marker == 0xFF: // fill byte
			i++
			continue
		case marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8): // no length
			i += 2
			continue
		case marker == 0xDA || marker == 0xD9: // start of scan, end of image
			return
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return
		}
		if !fn(marker, data[i+4:i+2+n]) {
			return
		}
		i += 2 + n
	}
}

// exifOrientation returns the EXIF orientation (1-8) of a JPEG, 1 when it
// has none: IFD0's tag 0x0112 in the first APP1 "Exif" segment holding
// one; anything malformed counts as no tag.
func exifOrientation(data []byte) int {
	o := 1
	jpegSegments(data, func(marker byte, body []byte) bool {
		if marker == 0xE1 && bytes.HasPrefix(body, []byte("Exif\x00\x00")) {
			if t := tiffOrientation(body[6:]); t != 0 {
				o = t
				return false
			}
		}
		return true
	})
	return o
}

// jpegProgressive reports whether a JPEG's frame is progressive (SOF2,
// SOF6, SOF10 or SOF14): its decoder keeps every coefficient, 4 bytes per
// sample, until the last scan.
func jpegProgressive(data []byte) bool {
	progressive := false
	jpegSegments(data, func(marker byte, _ []byte) bool {
		switch marker {
		case 0xC2, 0xC6, 0xCA, 0xCE:
			progressive = true
			return false
		}
		return true
	})
	return progressive
}

// tiffOrientation reads the orientation tag of a TIFF structure's IFD0,
// or 0 when it has none or is malformed.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0
	}
	if bo.Uint16(t[2:]) != 42 {
		return 0
	}
	off := int64(bo.Uint32(t[4:]))
	if off+2 > int64(len(t)) {
		return 0
	}
	count := int64(bo.Uint16(t[off:]))
	for k := range count {
		e := off + 2 + 12*k
		if e+12 > int64(len(t)) {
			return 0
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		if bo.Uint16(t[e+2:]) != 3 { // SHORT
			return 0
		}
		if o := int(bo.Uint16(t[e+8:])); o >= 1 && o <= 8 {
			return o
		}
		return 0
	}
	return 0
}

// notValid is the BAD_USER_INPUT of a file whose magic bytes name format
// f but whose content does not decode as f.
func notValid(f string, err error) error {
	return weibo.BadInput(field, "the file is not a valid %s picture: %v", name(f), err)
}

// name spells a format for messages.
func name(f string) string {
	switch f {
	case formatJPEG:
		return "JPEG"
	case formatPNG:
		return "PNG"
	case formatGIF:
		return "GIF"
	case formatWebP:
		return "WebP"
	}
	return f
}

// megapixels formats a pixel count for messages: "50 megapixels".
func megapixels(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%d pixels", n)
	}
	return trim(float64(n)/1e6) + " megapixels"
}
