package server_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	_ "image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// TestMediaProcessingOverHTTP checks the processing rules through the
// gateway, on both backends: a file is judged by its bytes (text named
// .jpg is BAD_USER_INPUT naming the accepted formats), a PNG whose header
// claims 100,000 × 100,000 pixels is PAYLOAD_TOO_LARGE, and the phone
// JPEG's three variants, fetched from /media, decode to the oriented
// picture's sizes (portrait) with none of its EXIF, camera or GPS bytes.
func TestMediaProcessingOverHTTP(t *testing.T) {
	phone := testenv.Fixture(t, testenv.PhoneJPEG)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			u := g.register(uniqueName("pics"))

			up := g.upload(u.token, []byte("<html><script>alert(1)</script></html>"), nil)
			if len(up.Errors) != 1 || up.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || !strings.Contains(up.Errors[0].Message, "JPEG") {
				t.Errorf("a text file: %+v, want BAD_USER_INPUT naming the formats", up.Errors)
			}
			up = g.upload(u.token, bombPNG(100_000, 100_000), nil)
			if len(up.Errors) != 1 || up.Errors[0].Extensions["code"] != "PAYLOAD_TOO_LARGE" {
				t.Errorf("a 10-gigapixel PNG header: %+v, want PAYLOAD_TOO_LARGE", up.Errors)
			}

			up = g.upload(u.token, phone, nil)
			m := up.Data.UploadMedia
			if m == nil {
				t.Fatalf("the phone JPEG: HTTP %d %+v", up.status, up.Errors)
			}
			for _, c := range []struct {
				variant string
				w, h    int
			}{{"thumb", 180, 180}, {"middle", 480, 640}, {"large", 480, 640}} {
				r := g.get("GET", "/media/"+m.ID+"/"+c.variant)
				if r.status != 200 {
					t.Fatalf("%s: HTTP %d", c.variant, r.status)
				}
				cfg, format, err := image.DecodeConfig(bytes.NewReader(r.body))
				if err != nil || format != "jpeg" || cfg.Width != c.w || cfg.Height != c.h {
					t.Errorf("%s: %s %dx%d (%v), want jpeg %dx%d", c.variant, format, cfg.Width, cfg.Height, err, c.w, c.h)
				}
				for _, leak := range []string{"Exif\x00\x00", "GPS", "FixtureMaker", "Fixture Model 1", "fixture-software"} {
					if bytes.Contains(r.body, []byte(leak)) {
						t.Errorf("%s holds %q", c.variant, leak)
					}
				}
			}
		})
	}
}

// bombPNG is the start of a PNG whose header claims w × h pixels: the
// signature and a valid IHDR chunk, then one tiny IDAT — a few dozen
// bytes that would decode to w × h × 4 bytes.
func bombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// TestMediaAttachRulesOverHTTP checks publishPost's rules on pictures
// through the gateway, on both backends: another user's picture, ten
// pictures and a picture attached already are each BAD_USER_INPUT on
// mediaIds, and nothing is published; nine of one's own are.
func TestMediaAttachRulesOverHTTP(t *testing.T) {
	const publish = `mutation($c: String!, $ids: [ID!]) { publishPost(content: $c, mediaIds: $ids) { id media { id } } }`
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))
			var ids []string
			for i := range 10 {
				up := g.upload(alice.token, tinyPNG(t, uint8(i)), nil)
				if up.Data.UploadMedia == nil {
					t.Fatalf("upload %d: HTTP %d %+v", i, up.status, up.Errors)
				}
				ids = append(ids, up.Data.UploadMedia.ID)
			}
			refused := func(token string, ids []string, why string) {
				t.Helper()
				if e := g.fails(token, "BAD_USER_INPUT", publish, map[string]any{"c": why, "ids": ids}); e.Extensions["field"] != "mediaIds" {
					t.Errorf("%s: field %v, want mediaIds", why, e.Extensions["field"])
				}
			}
			refused(bob.token, ids[:1], "another user's picture")
			refused(alice.token, ids, "ten pictures")
			var d struct {
				PublishPost struct {
					ID    string
					Media []struct{ ID string }
				}
			}
			g.ok(alice.token, publish, map[string]any{"c": "nine", "ids": ids[:9]}, &d)
			if len(d.PublishPost.Media) != 9 || d.PublishPost.Media[8].ID != ids[8] {
				t.Fatalf("published %+v, want the nine pictures in order", d.PublishPost)
			}
			refused(alice.token, ids[8:], "a picture attached already")
			var posts struct {
				User struct{ PostCount int }
			}
			g.ok(alice.token, `query($id: ID!) { user(id: $id) { postCount } }`, map[string]any{"id": alice.ID}, &posts)
			if posts.User.PostCount != 1 {
				t.Errorf("postCount %d after the refusals, want 1", posts.User.PostCount)
			}
		})
	}
}

// tinyPNG is a 2 × 2 opaque PNG of a colour made from seed.
func tinyPNG(t *testing.T, seed uint8) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for i := range img.Pix {
		img.Pix[i] = seed*20 + uint8(i%4)*3
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
