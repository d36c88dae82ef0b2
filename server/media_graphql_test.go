package server_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/resolvers"
	"github.com/weibohbase/gateway/server"
)

// uploadResponse is a multipart uploadMedia answer.
type uploadResponse struct {
	Data struct {
		UploadMedia *struct {
			ID       string  `json:"id"`
			Alt      *string `json:"alt"`
			MimeType string  `json:"mimeType"`
			Bytes    int     `json:"bytes"`
			Thumb    string  `json:"thumb"`
			URL      string  `json:"url"`
		} `json:"uploadMedia"`
	} `json:"data"`
	Errors     []gqlError `json:"errors"`
	Extensions struct {
		Cost struct {
			Nodes int64 `json:"nodes"`
		} `json:"cost"`
	} `json:"extensions"`
	status int
}

const uploadMutation = `mutation($file: Upload!, $alt: String) { uploadMedia(file: $file, alt: $alt) { id alt mimeType bytes thumb: url(variant: THUMB) url } }`

// upload sends uploadMedia with data as the file, as apollo-upload-client
// does (the spec's operations, map and file parts, Apollo-Require-Preflight).
func (g *gw) upload(token string, data []byte, alt *string) uploadResponse {
	g.t.Helper()
	ops := mustJSON(map[string]any{"query": uploadMutation, "variables": map[string]any{"file": nil, "alt": alt}})
	body, ct := multipartBody(g.t, ops, `{"1": ["variables.file"]}`, []string{"1"}, map[string][]byte{"1": data})
	r := g.postMultipart(body, ct, false, "Apollo-Require-Preflight", "true", "Authorization", "Bearer "+token)
	var out uploadResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		g.t.Fatalf("upload: %v: %s", err, r.body)
	}
	out.status = r.status
	return out
}

// TestUploadMedia: uploadMedia over the multipart spec reaches the media
// service with the file's bytes, answers the Media fields and its URLs,
// which the server serves; it needs a token; it costs a heavy operation's
// budget; updateMedia and publishPost with mediaIds; Post.media.
func TestUploadMedia(t *testing.T) {
	g, _ := startMediaGateway(t, nil)
	alice := g.register(uniqueName("alice"))
	bob := g.register(uniqueName("bob"))
	file := []byte("\xff\xd8\xff\xe0 the picture's bytes")
	alt := "a cat"

	up := g.upload(alice.token, file, &alt)
	m := up.Data.UploadMedia
	if up.status != 200 || len(up.Errors) > 0 || m == nil {
		t.Fatalf("upload: HTTP %d, %+v", up.status, up.Errors)
	}
	if m.Alt == nil || *m.Alt != alt || m.Bytes != len(file) || m.MimeType != "image/jpeg" {
		t.Errorf("uploaded %+v, want alt %q and %d bytes of image/jpeg", m, alt, len(file))
	}
	if want := "/media/" + m.ID + "/thumb"; m.Thumb != want {
		t.Errorf("url(variant: THUMB) %q, want %q", m.Thumb, want)
	}
	if want := "/media/" + m.ID + "/middle"; m.URL != want {
		t.Errorf("url %q, want %q (MIDDLE by default)", m.URL, want)
	}
	if r := g.get("GET", m.Thumb); r.status != 200 || string(r.body) != string(file) {
		t.Errorf("GET %s: HTTP %d, %q", m.Thumb, r.status, r.body)
	}
	if up.Extensions.Cost.Nodes < resolvers.UploadNodes || up.Extensions.Cost.Nodes < server.HeavyQueryNodes {
		t.Errorf("an upload cost %d nodes, want at least %d (a heavy operation)", up.Extensions.Cost.Nodes, resolvers.UploadNodes)
	}

	t.Run("needs a token", func(t *testing.T) {
		up := g.in(t).upload("", file, nil)
		if len(up.Errors) == 0 || up.Errors[0].Extensions["code"] != "UNAUTHENTICATED" {
			t.Errorf("want UNAUTHENTICATED: %+v", up.Errors)
		}
	})
	t.Run("an empty file", func(t *testing.T) {
		up := g.in(t).upload(alice.token, nil, nil)
		if len(up.Errors) == 0 || up.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || up.Errors[0].Extensions["field"] != "file" {
			t.Errorf("want BAD_USER_INPUT on file: %+v", up.Errors)
		}
	})
	t.Run("updateMedia", func(t *testing.T) {
		var d struct{ UpdateMedia struct{ Alt *string } }
		g.in(t).ok(alice.token, `mutation($id: ID!) { updateMedia(id: $id, alt: "a black cat") { alt } }`, map[string]any{"id": m.ID}, &d)
		if d.UpdateMedia.Alt == nil || *d.UpdateMedia.Alt != "a black cat" {
			t.Errorf("alt %v", d.UpdateMedia.Alt)
		}
		g.in(t).fails(bob.token, "FORBIDDEN", `mutation($id: ID!) { updateMedia(id: $id, alt: "mine") { alt } }`, map[string]any{"id": m.ID})
	})
	t.Run("publishPost with mediaIds", func(t *testing.T) {
		var d struct {
			PublishPost struct {
				Media []struct{ ID, URL string }
			}
		}
		g.in(t).ok(alice.token, `mutation($ids: [ID!]) { publishPost(content: "look", mediaIds: $ids) { media { id url(variant: LARGE) } } }`,
			map[string]any{"ids": []string{m.ID}}, &d)
		if got := d.PublishPost.Media; len(got) != 1 || got[0].ID != m.ID || got[0].URL != "/media/"+m.ID+"/large" {
			t.Errorf("the post's media %+v, want %s", got, m.ID)
		}
		ten := make([]string, 10)
		for i := range ten {
			ten[i] = m.ID
		}
		e := g.in(t).fails(alice.token, "BAD_USER_INPUT", `mutation($ids: [ID!]) { publishPost(content: "ten", mediaIds: $ids) { id } }`, map[string]any{"ids": ten})
		if e.Extensions["field"] != "mediaIds" {
			t.Errorf("field %v, want mediaIds", e.Extensions["field"])
		}
		var text struct{ PublishPost struct{ Media []any } }
		g.in(t).ok(alice.token, `mutation { publishPost(content: "text only") { media { id } } }`, nil, &text)
		if text.PublishPost.Media == nil || len(text.PublishPost.Media) != 0 {
			t.Errorf("a text post's media %v, want []", text.PublishPost.Media)
		}
	})
}

// TestUploadRateLimit: the 31st upload of a user within 10 minutes is
// RATE_LIMITED with extensions.retryAfter, another user is not limited,
// and the window slides.
func TestUploadRateLimit(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	g, _ := startMediaGateway(t, func(c *server.Config) { c.Now = clock })
	alice := g.register(uniqueName("alice"))
	bob := g.register(uniqueName("bob"))
	for i := range resolvers.UploadRate {
		if up := g.upload(alice.token, []byte("picture "+strconv.Itoa(i)), nil); len(up.Errors) > 0 {
			t.Fatalf("upload %d: %+v", i+1, up.Errors)
		}
	}
	up := g.upload(alice.token, []byte("one too many"), nil)
	if len(up.Errors) == 0 || up.Errors[0].Extensions["code"] != "RATE_LIMITED" {
		t.Fatalf("upload %d: want RATE_LIMITED: %+v", resolvers.UploadRate+1, up.Errors)
	}
	retry, _ := up.Errors[0].Extensions["retryAfter"].(float64)
	if retry < 1 || retry > resolvers.UploadWindow.Seconds() {
		t.Errorf("retryAfter %v, want 1 to %v s", up.Errors[0].Extensions["retryAfter"], resolvers.UploadWindow.Seconds())
	}
	if up := g.upload(bob.token, []byte("bob's"), nil); len(up.Errors) > 0 {
		t.Errorf("another user: %+v", up.Errors)
	}
	mu.Lock()
	now = now.Add(resolvers.UploadWindow)
	mu.Unlock()
	if up := g.upload(alice.token, []byte("later"), nil); len(up.Errors) > 0 {
		t.Errorf("after the window: %+v", up.Errors)
	}
}

// TestHomeTimelineMediaStoreCalls: a home page selecting the pictures'
// thumbnails costs the same store calls and one read of the media service
// at any first.
func TestHomeTimelineMediaStoreCalls(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) { homeTimelineMediaStoreCalls(t, b.Open(t)) })
	}
}

func homeTimelineMediaStoreCalls(t *testing.T, st hbase.StoreAdmin) {
	g, src := startMediaGatewayOn(t, st, nil)
	alice := g.register(uniqueName("alice"))
	const posts = 12
	for i := range posts {
		var ids []string
		for j := range 1 + i%3 {
			up := g.upload(alice.token, []byte(fmt.Sprintf("picture %d.%d", i, j)), nil)
			if up.Data.UploadMedia == nil {
				t.Fatalf("upload: %+v", up.Errors)
			}
			ids = append(ids, up.Data.UploadMedia.ID)
		}
		g.ok(alice.token, `mutation($ids: [ID!]) { publishPost(content: "pictures", mediaIds: $ids) { id } }`, map[string]any{"ids": ids}, nil)
		time.Sleep(2 * time.Millisecond) // distinct milliseconds keep the order
	}
	g.flush()
	const q = `query($n: Int) { homeTimeline(first: $n) { edges { node { id media { url(variant: THUMB) blurhash width height } } } } }`
	var calls []float64
	for _, first := range []int{3, posts} {
		var d struct {
			HomeTimeline struct {
				Edges []struct {
					Node struct {
						Media []struct{ URL string }
					}
				}
			}
		}
		before := src.gets.Load()
		calls = append(calls, g.okCalls(alice.token, q, map[string]any{"n": first}, &d))
		if n := src.gets.Load() - before; n != 1 {
			t.Errorf("first %d: %d reads of the media service, want 1", first, n)
		}
		if len(d.HomeTimeline.Edges) != first {
			t.Fatalf("first %d: %d edges", first, len(d.HomeTimeline.Edges))
		}
		for _, e := range d.HomeTimeline.Edges {
			if len(e.Node.Media) == 0 {
				t.Errorf("first %d: a post without its pictures", first)
			}
		}
	}
	if calls[0] != calls[1] {
		t.Errorf("store calls %v at first 3 and %d, want equal", calls, posts)
	}
}
