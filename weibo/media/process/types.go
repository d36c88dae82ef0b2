// Package process is safe image processing: the types the store builds
// on. This file declares only the shared contract's types; the package's
// logic (Process, Limits) is another part's.
package process

// Variant names one size of a processed picture.
type Variant string

// The variants of a picture, smallest first.
const (
	// Thumb is the 180 × 180 square crop.
	Thumb Variant = "THUMB"
	// Middle has its longest side at most 690 pixels.
	Middle Variant = "MIDDLE"
	// Large has its longest side at most 2048 pixels, never upscaled.
	Large Variant = "LARGE"
)

// Image is one encoded variant: its MIME type, size in pixels and bytes.
type Image struct {
	Variant       Variant
	MIME          string
	Width, Height int
	Data          []byte
}

// Result is a processed upload: the input's format by content ("jpeg",
// "png", "gif", "webp"), its blurhash and its images, THUMB, MIDDLE,
// LARGE in that order.
type Result struct {
	Format   string
	Blurhash string
	Images   []Image
}
