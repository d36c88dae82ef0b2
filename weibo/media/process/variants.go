package process

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"

	"github.com/buckket/go-blurhash"
	"github.com/disintegration/imaging"
)

// filter resamples every downscale: Catmull-Rom (bicubic) is as sharp as
// a photo needs at these ratios, with fewer taps (less CPU) than Lanczos.
var filter = imaging.CatmullRom

// blurSide is the square the blurhash is computed on: its 4 × 3
// components need no more pixels, and the encoder's cost is per pixel.
const blurSide = 32

// variants derives THUMB, MIDDLE and LARGE and the blurhash of p.
func (p *picture) variants(ctx context.Context) (*Result, error) {
	opaque := isOpaque(p.still)
	large := orient(fit(p.still, largeSide), p.orientation)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	middle := fit(large, middleSide)

	// THUMB from the smallest source whose shorter side still covers it:
	// MIDDLE, else LARGE, else the picture itself (a very long panorama).
	src := middle
	if shorter(src) < thumbSide {
		src = large
	}
	if shorter(src) < thumbSide && shorter(p.still) > shorter(src) {
		src = orient(p.still, p.orientation)
	}
	var thumb image.Image
	if s := shorter(src); s <= thumbSide {
		thumb = imaging.CropCenter(src, s, s)
	} else {
		thumb = imaging.Fill(src, thumbSide, thumbSide, imaging.Center, filter)
	}

	hash, err := blurhash.Encode(blurX, blurY, fit(middle, blurSide))
	if err != nil {
		return nil, fmt.Errorf("process: blurhash: %w", err)
	}
	r := &Result{Blurhash: hash, Images: make([]Image, 0, 3)}
	for _, v := range []struct {
		variant Variant
		m       image.Image
	}{{Thumb, thumb}, {Middle, middle}} {
		img, err := encodeStill(v.variant, v.m, opaque)
		if err != nil {
			return nil, err
		}
		r.Images = append(r.Images, img)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.anim != nil {
		img, ok, err := p.animation(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			r.Images = append(r.Images, img)
			return r, nil
		}
	}
	img, err := encodeStill(Large, large, opaque)
	if err != nil {
		return nil, err
	}
	r.Images = append(r.Images, img)
	return r, nil
}

// encodeStill encodes m as variant v: JPEG when opaque, PNG otherwise.
// An encoding over MaxVariantBytes is made again from m scaled to 70%,
// until it fits.
func encodeStill(v Variant, m image.Image, opaque bool) (Image, error) {
	for {
		var (
			buf  bytes.Buffer
			mime string
			err  error
		)
		if opaque {
			mime = "image/jpeg"
			err = jpeg.Encode(&buf, forJPEG(m), &jpeg.Options{Quality: jpegQuality})
		} else {
			mime = "image/png"
			err = png.Encode(&buf, m)
		}
		if err != nil {
			return Image{}, fmt.Errorf("process: encode %s as %s: %w", v, mime, err)
		}
		b := m.Bounds()
		if buf.Len() <= MaxVariantBytes {
			return Image{Variant: v, MIME: mime, Width: b.Dx(), Height: b.Dy(), Data: buf.Bytes()}, nil
		}
		m = imaging.Resize(m, max(1, b.Dx()*7/10), max(1, b.Dy()*7/10), filter)
	}
}

// forJPEG returns m in a form the JPEG encoder converts quickly: an opaque
// *image.NRGBA (what resizing produces) has the same bytes as an
// *image.RGBA, for which the encoder has a fast path, so it is viewed as
// one without copying.
func forJPEG(m image.Image) image.Image {
	if n, ok := m.(*image.NRGBA); ok {
		return &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
	}
	return m
}

// animation encodes an animated GIF's LARGE: its frames as decoded when
// the screen fits LARGE's square, otherwise each frame composed on the
// screen as a viewer shows it, resized and mapped back to its palette.
// ok is false when LARGE is to be the still picture instead: its frames
// together would be over p.maxPixels, or the encoding over
// MaxVariantBytes.
func (p *picture) animation(ctx context.Context) (img Image, ok bool, err error) {
	g := p.anim
	w, h := fitDims(g.Config.Width, g.Config.Height, largeSide)
	out := &gif.GIF{LoopCount: g.LoopCount}
	if w == g.Config.Width && h == g.Config.Height {
		out.Image, out.Delay, out.Disposal = g.Image, g.Delay, g.Disposal
		out.Config, out.BackgroundIndex = g.Config, g.BackgroundIndex
	} else {
		if int64(len(g.Image))*int64(w)*int64(h) > p.maxPixels {
			return Image{}, false, nil
		}
		out.Config = image.Config{Width: w, Height: h}
		if out.Image, err = resizeFrames(ctx, g, w, h); err != nil {
			return Image{}, false, err
		}
		out.Delay = g.Delay
		out.Disposal = make([]byte, len(out.Image))
		for i := range out.Disposal {
			// Each frame is whole: clear the previous one, whose pixels
			// would show through the transparent ones otherwise.
			out.Disposal[i] = gif.DisposalBackground
		}
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, out); err != nil {
		return Image{}, false, fmt.Errorf("process: encode animated LARGE: %w", err)
	}
	if buf.Len() > MaxVariantBytes {
		return Image{}, false, nil
	}
	return Image{Variant: Large, MIME: "image/gif", Width: w, Height: h, Data: buf.Bytes()}, true, nil
}

// resizeFrames composes each of g's frames on the screen (honouring the
// previous frames' disposal), resizes the screen to w × h and maps it to
// the frame's palette, plus a transparent colour when the frame shows
// transparency and its palette has room and none.
func resizeFrames(ctx context.Context, g *gif.GIF, w, h int) ([]*image.Paletted, error) {
	screen := image.Rect(0, 0, g.Config.Width, g.Config.Height)
	canvas := image.NewNRGBA(screen)
	frames := make([]*image.Paletted, len(g.Image))
	for i, f := range g.Image {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var disposal byte
		if i < len(g.Disposal) {
			disposal = g.Disposal[i]
		}
		var saved *image.NRGBA
		if disposal == gif.DisposalPrevious {
			saved = imaging.Clone(canvas)
		}
		draw.Draw(canvas, f.Bounds(), f, f.Bounds().Min, draw.Over)
		resized := imaging.Resize(canvas, w, h, filter)
		pal := f.Palette
		if !resized.Opaque() && len(pal) < 256 && !hasTransparent(pal) {
			pal = append(append(color.Palette{}, pal...), color.NRGBA{})
		}
		frames[i] = image.NewPaletted(image.Rect(0, 0, w, h), pal)
		draw.Draw(frames[i], frames[i].Rect, resized, image.Point{}, draw.Src)
		switch disposal {
		case gif.DisposalBackground:
			draw.Draw(canvas, f.Bounds(), image.Transparent, image.Point{}, draw.Src)
		case gif.DisposalPrevious:
			canvas = saved
		}
	}
	return frames, nil
}

func hasTransparent(p color.Palette) bool {
	for _, c := range p {
		if _, _, _, a := c.RGBA(); a == 0 {
			return true
		}
	}
	return false
}

// fit returns m scaled down to fit a side × side square, or m itself when
// it fits already (never upscaled).
func fit(m image.Image, side int) image.Image {
	b := m.Bounds()
	w, h := fitDims(b.Dx(), b.Dy(), side)
	if w == b.Dx() && h == b.Dy() {
		return m
	}
	return imaging.Resize(m, w, h, filter)
}

// fitDims scales w × h down to fit a side × side square, keeping the
// aspect ratio (rounded, at least one pixel); a picture that fits keeps
// its size.
func fitDims(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(1, int((int64(h)*int64(side)+int64(w)/2)/int64(w)))
	}
	return max(1, int((int64(w)*int64(side)+int64(h)/2)/int64(h))), side
}

// shorter returns the shorter side of m in pixels.
func shorter(m image.Image) int {
	b := m.Bounds()
	return min(b.Dx(), b.Dy())
}

// orient transforms m as EXIF orientation o says to show it (1: as is;
// 6: a quarter turn clockwise; 8: counter-clockwise; 3: a half turn; 2,
// 4, 5 and 7: the mirrored ones).
func orient(m image.Image, o int) image.Image {
	switch o {
	case 2:
		return imaging.FlipH(m)
	case 3:
		return imaging.Rotate180(m)
	case 4:
		return imaging.FlipV(m)
	case 5:
		return imaging.Transpose(m)
	case 6:
		return imaging.Rotate270(m)
	case 7:
		return imaging.Transverse(m)
	case 8:
		return imaging.Rotate90(m)
	}
	return m
}

// isOpaque reports whether every pixel of m is fully opaque.
func isOpaque(m image.Image) bool {
	if o, ok := m.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := m.At(x, y).RGBA(); a != 0xffff {
				return false
			}
		}
	}
	return true
}
