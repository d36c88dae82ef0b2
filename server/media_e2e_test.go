package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
)

// TestMediaEndToEnd: the real processing and store behind the GraphQL
// layer and /media (the domain's, the server's default): an upload of a phone JPEG, published, served with its
// hash as ETag, a 404 once its post is deleted; a page's store calls
// constant at any first.
func TestMediaEndToEnd(t *testing.T) {
	file := testenv.Fixture(t, testenv.PhoneJPEG)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice := g.register(uniqueName("alice"))
			up := g.upload(alice.token, file, nil)
			m := up.Data.UploadMedia
			if m == nil {
				t.Fatalf("upload: HTTP %d %+v", up.status, up.Errors)
			}
			t.Logf("uploaded %+v, cost %d", *m, up.Extensions.Cost.Nodes)
			r := g.get("GET", m.Thumb)
			sum := sha256.Sum256(r.body)
			if r.status != 200 || r.header.Get("Content-Type") != "image/jpeg" || r.header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
				t.Fatalf("GET %s: HTTP %d, %q, ETag %q", m.Thumb, r.status, r.header.Get("Content-Type"), r.header.Get("ETag"))
			}
			if r := g.get("GET", m.Thumb, "If-None-Match", r.header.Get("ETag")); r.status != http.StatusNotModified {
				t.Errorf("If-None-Match: HTTP %d", r.status)
			}
			var pub struct {
				PublishPost struct {
					ID    string
					Media []struct{ ID string }
				}
			}
			g.ok(alice.token, `mutation($ids: [ID!]) { publishPost(content: "", mediaIds: $ids) { id media { id } } }`, map[string]any{"ids": []string{m.ID}}, &pub)
			if len(pub.PublishPost.Media) != 1 || pub.PublishPost.Media[0].ID != m.ID {
				t.Fatalf("published %+v", pub)
			}
			g.fails(alice.token, "BAD_USER_INPUT", `mutation($ids: [ID!]) { publishPost(content: "again", mediaIds: $ids) { id } }`, map[string]any{"ids": []string{m.ID}})
			var node struct {
				Node *struct {
					ID            string
					Width, Height int
				}
			}
			g.ok("", `query($id: ID!) { node(id: $id) { id ... on Media { width height } } }`, map[string]any{"id": m.ID}, &node)
			if node.Node == nil || node.Node.ID != m.ID || node.Node.Width != 480 || node.Node.Height != 640 {
				t.Fatalf("node(id: %s) = %+v, want the picture, portrait 480 × 640", m.ID, node.Node)
			}

			// The page's store calls at any first.
			for i := range 6 {
				up := g.upload(alice.token, file, nil)
				if up.Data.UploadMedia == nil {
					t.Fatalf("upload %d: %+v", i, up.Errors)
				}
				g.ok(alice.token, `mutation($ids: [ID!]) { publishPost(content: "p", mediaIds: $ids) { id } }`, map[string]any{"ids": []string{up.Data.UploadMedia.ID}}, nil)
				time.Sleep(2 * time.Millisecond)
			}
			g.flush()
			const q = `query($n: Int) { homeTimeline(first: $n) { edges { node { id media { url(variant: THUMB) blurhash width height } } } } }`
			c2 := g.okCalls(alice.token, q, map[string]any{"n": 2}, nil)
			c7 := g.okCalls(alice.token, q, map[string]any{"n": 7}, nil)
			if c2 != c7 {
				t.Errorf("store calls %v at first 2, %v at first 7", c2, c7)
			}
			t.Logf("home page with media: %v store calls", c7)

			var del struct{ DeletePost bool }
			g.ok(alice.token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": pub.PublishPost.ID}, &del)
			// A fresh gateway (no cache) answers 404 for the deleted post's picture.
			deadline := time.Now().Add(10 * time.Second)
			for {
				r := g.get("GET", "/media/"+m.ID+"/large")
				if r.status == http.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("a deleted post's picture: HTTP %d", r.status)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
