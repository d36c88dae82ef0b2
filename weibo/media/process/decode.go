package process

import (
	"bytes"
	"context"
	"image"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/webp"
	"golang.org/x/sync/semaphore"
)

// decodeBudget bounds, in bytes, the estimated memory of the decodes in
// flight in the process (header.weight: decoded pixels and working
// copies). A decode waits until its weight fits; one weighing more than
// the whole budget waits until it runs alone. The bound keeps a burst of
// uploads of large photos from multiplying the heap: at the budget, two
// 12-megapixel JPEGs decode at once and the others wait their turn.
const decodeBudget = 192 << 20

var decodes = semaphore.NewWeighted(decodeBudget)

// acquire waits for weight bytes of the decode budget (all of it when
// weight is larger), or until ctx ends (ctx's error), and returns the
// release of what it took.
func acquire(ctx context.Context, weight int64) (release func(), err error) {
	w := min(max(weight, 1), decodeBudget)
	if err := decodes.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { decodes.Release(w) }, nil
}

// picture is a decoded input.
type picture struct {
	// still is the picture (an animation's first frame), before
	// orientation.
	still image.Image
	// orientation is the EXIF orientation (1-8) still is to be shown in.
	orientation int
	// anim is an animated GIF's frames (more than one), nil otherwise.
	anim *gif.GIF
	// maxPixels bounds an animation's LARGE frames together, in pixels.
	maxPixels int64
}

// decodeStill decodes a JPEG, PNG or WebP with the one decoder of its
// sniffed format.
func decodeStill(f string, data []byte, l Limits) (*picture, error) {
	var (
		m   image.Image
		err error
	)
	r := bytes.NewReader(data)
	p := &picture{orientation: 1, maxPixels: l.MaxPixels}
	switch f {
	case formatJPEG:
		m, err = jpeg.Decode(r)
		p.orientation = exifOrientation(data)
	case formatPNG:
		m, err = png.Decode(r)
	case formatWebP:
		m, err = webp.Decode(r)
	}
	if err != nil {
		return nil, notValid(f, err)
	}
	p.still = m
	return p, nil
}

// decodeGIF decodes every frame of a GIF, whose frames and areas
// readHeader has bounded; more than one frame makes an animation, whose
// first frame, drawn on the transparent screen, is the still picture.
func decodeGIF(data []byte, l Limits) (*picture, error) {
	g, err := gif.DecodeAll(bytes.NewReader(data))
	if err != nil {
		return nil, notValid(formatGIF, err)
	}
	if len(g.Image) == 0 {
		return nil, notValid(formatGIF, errNoFrames)
	}
	screen := image.Rect(0, 0, g.Config.Width, g.Config.Height)
	first := g.Image[0]
	var still image.Image = first
	if first.Bounds() != screen {
		canvas := image.NewNRGBA(screen)
		draw.Draw(canvas, first.Bounds(), first, first.Bounds().Min, draw.Over)
		still = canvas
	}
	p := &picture{still: still, orientation: 1, maxPixels: l.MaxPixels}
	if len(g.Image) > 1 {
		p.anim = g
	}
	return p, nil
}

type gifError string

func (e gifError) Error() string { return string(e) }

const errNoFrames = gifError("no frames")
