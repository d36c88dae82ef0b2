// Package process turns an uploaded file into the pictures the gateway
// stores and serves: the variants THUMB, MIDDLE and LARGE of a JPEG, PNG,
// GIF or WebP picture, each re-encoded from its pixels, and a blurhash.
// It is pure: no store, no HTTP; Process takes bytes and returns bytes.
//
// Pictures are the most dangerous input a social API takes, so each step
// of the pipeline is there for a reason:
//
//  1. Size. A file over Limits.MaxBytes is refused (PAYLOAD_TOO_LARGE)
//     before anything reads it.
//  2. Format by content. The first bytes (the formats' magic numbers)
//     decide the format; a name or a declared type is never asked, since
//     both are the client's word. Anything but JPEG, PNG, GIF and WebP is
//     refused (BAD_USER_INPUT on field "file"), and the one decoder of the
//     sniffed format is called directly, never image.Decode, whose
//     registry holds whatever formats some imported package registered
//     (BMP and TIFF among them).
//  3. Pixels from the header. A decompression bomb is a small file
//     declaring a huge picture (a PNG of a few KB can declare 100,000 ×
//     100,000 pixels, 40 GB once decoded). The header alone
//     (DecodeConfig) gives the dimensions, and over Limits.MaxPixels the
//     file is refused before any pixel buffer exists. A GIF's frames are
//     counted and their areas summed by walking its blocks, without
//     decompressing them, against the same limit and a frame cap.
//  4. A bound on concurrent decodes. Decoding and resizing hold the
//     picture's pixels several times over; a package-wide weighted
//     semaphore admits a decode only while the estimated memory of the
//     decodes in flight stays under a budget, so a burst of uploads waits
//     (honouring its context) instead of growing the heap without bound.
//  5. Orientation. A phone stores a portrait photo as landscape pixels
//     and an EXIF orientation tag; the tag is applied to the pixels,
//     since the tag itself is about to be dropped.
//  6. Metadata dropped, polyglots defused. Every output is encoded anew
//     from decoded pixels (JPEG at quality 85 for opaque pictures, PNG for
//     pictures with transparency, GIF for animations), so nothing of the
//     input's bytes survives: no EXIF (camera, software, GPS position),
//     XMP, ICC profile, comment or application block, and no second file
//     hidden in one (a ZIP or an HTML page appended to a JPEG, a script
//     in a GIF comment) reaches a served byte.
//  7. Variants. THUMB is a 180 × 180 centre crop for the nine-picture
//     grid, MIDDLE fits a 690-pixel square, LARGE a 2048-pixel square;
//     none is upscaled, so a smaller picture keeps its size. An animated
//     GIF keeps its animation in LARGE (frames re-encoded; only the
//     looping extension kept) and shows its first frame elsewhere.
//  8. Stored size. No output exceeds MaxVariantBytes (HBase's default
//     hbase.server.keyvalue.maxsize): an animation that would is stored
//     as its first frame, a still picture that would is scaled down.
//
// Errors are *weibo.Error values (CodeBadUserInput or
// CodePayloadTooLarge, Field "file"), or the context's error when the
// caller gave up while Process waited or worked.
package process
