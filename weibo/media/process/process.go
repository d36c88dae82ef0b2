package process

import (
	"context"
	"fmt"

	"github.com/weibohbase/gateway/weibo"
)

// Variant names one stored size of a picture; its values are the GraphQL
// enum MediaVariant's.
type Variant string

// The variants, in the order Result.Images holds them.
const (
	// Thumb is a square centre crop, 180 × 180 pixels (smaller when the
	// picture's shorter side is), for the nine-picture grid.
	Thumb Variant = "THUMB"
	// Middle fits the picture in a 690 × 690 square, never upscaled.
	Middle Variant = "MIDDLE"
	// Large fits the picture in a 2048 × 2048 square, never upscaled; an
	// animated GIF keeps its animation here.
	Large Variant = "LARGE"
)

// Sides of the squares the variants fit, in pixels.
const (
	thumbSide  = 180
	middleSide = 690
	largeSide  = 2048
)

// Defaults of Limits, used where a field is zero or negative.
const (
	// DefaultMaxBytes is the largest file Process takes: 20 MB.
	DefaultMaxBytes = 20 << 20
	// DefaultMaxPixels is the largest picture Process decodes: 50
	// megapixels (width × height; for a GIF, the sum over its frames).
	DefaultMaxPixels = 50_000_000
)

// MaxVariantBytes bounds every output's encoded size: 10 MB, HBase's
// default hbase.server.keyvalue.maxsize, so that any variant fits in one
// cell.
const MaxVariantBytes = 10 << 20

// maxFrames bounds a GIF's frames: each costs a decoded frame's bookkeeping
// whatever its area, so a file of thousands of one-pixel frames is refused.
const maxFrames = 1000

// jpegQuality is the quality of every JPEG output (1-100).
const jpegQuality = 85

// Blurhash components, across and down.
const blurX, blurY = 4, 3

// Image is one re-encoded variant of a picture.
type Image struct {
	// Variant is the size this is.
	Variant Variant
	// MIME is the type of Data: "image/jpeg", "image/png" or "image/gif".
	MIME string
	// Width and Height are in pixels, after orientation.
	Width, Height int
	// Data is the encoded picture, at most MaxVariantBytes, carrying no
	// metadata.
	Data []byte
}

// Result is a processed picture.
type Result struct {
	// Format is the input's format by content: "jpeg", "png", "gif" or
	// "webp".
	Format string
	// Blurhash encodes a 4 × 3-component blur of the picture
	// (https://blurha.sh), for a placeholder while a variant loads.
	Blurhash string
	// Images holds THUMB, MIDDLE and LARGE, in that order; every byte is
	// re-encoded from pixels, with no metadata.
	Images []Image
}

// Limits bound what Process accepts; a zero or negative field takes its
// default (DefaultMaxBytes, DefaultMaxPixels).
type Limits struct {
	// MaxBytes is the largest file in bytes.
	MaxBytes int64
	// MaxPixels is the largest picture in pixels (width × height; for a
	// GIF, the sum of its frames' areas), read from the header before
	// decoding.
	MaxPixels int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = DefaultMaxPixels
	}
	return l
}

// field is the argument every error of Process names: uploadMedia's file.
const field = "file"

// Process checks data (at most l.MaxBytes, a JPEG, PNG, GIF or WebP by its
// content, at most l.MaxPixels by its header), decodes it under the
// package's bound on concurrent decodes, applies its EXIF orientation and
// returns its three variants, re-encoded without metadata, and its
// blurhash.
//
// Errors: a *weibo.Error with CodePayloadTooLarge (Field "file") when data
// is over either limit; with CodeBadUserInput (Field "file") when it is
// not one of the accepted formats or does not decode as the format it
// claims; ctx's error when ctx ends first (while waiting for a decode slot
// or between steps).
func Process(ctx context.Context, data []byte, l Limits) (*Result, error) {
	l = l.withDefaults()
	if int64(len(data)) > l.MaxBytes {
		return nil, tooLarge("the file is %s; at most %s is accepted", size(int64(len(data))), size(l.MaxBytes))
	}
	f := sniff(data)
	if f == "" {
		return nil, weibo.BadInput(field, "the file is not a picture in an accepted format: JPEG, PNG, GIF or WebP")
	}
	h, err := readHeader(f, data, l)
	if err != nil {
		return nil, err
	}
	release, err := acquire(ctx, h.weight)
	if err != nil {
		return nil, err
	}
	defer release()
	var p *picture
	if f == formatGIF {
		p, err = decodeGIF(data, l)
	} else {
		p, err = decodeStill(f, data, l)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := p.variants(ctx)
	if err != nil {
		return nil, err
	}
	r.Format = f
	return r, nil
}

// tooLarge returns a PAYLOAD_TOO_LARGE *weibo.Error on field "file".
func tooLarge(format string, args ...any) error {
	return &weibo.Error{Code: weibo.CodePayloadTooLarge, Field: field, Message: fmt.Sprintf(format, args...)}
}

// size formats n bytes for a message: "20 MB", "312 KB", "18 bytes".
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return trim(float64(n)/(1<<20)) + " MB"
	case n >= 1<<10:
		return trim(float64(n)/(1<<10)) + " KB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}
