package clients_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/resolvers/mediamodel"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// uploadConfig is what apollo/upload.test.mjs reads from GATEWAY_APOLLO_UPLOAD_TEST.
type uploadConfig struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	File  []byte `json:"file"` // base64 in JSON
}

// TestApolloUpload runs apollo-upload-client (apollo/upload.test.mjs)
// against a gateway: uploadMedia with a File over the multipart request
// spec and Apollo-Require-Preflight, publishPost with its id, the
// thumbnail served from the URL given; the same upload without the
// preflight header refused with BAD_REQUEST (HTTP 400).
func TestApolloUpload(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	g := gatewaytest.Start(t, testenv.Embedded(t))
	var reg struct {
		Register struct{ Token string }
	}
	g.OK("", `mutation { register(username: "uploader", password: "correct horse") { token } }`, nil, &reg)
	jpeg := testenv.Fixture(t, testenv.PhoneJPEG)
	env, err := json.Marshal(uploadConfig{URL: g.URL, Token: reg.Register.Token, File: jpeg})
	if err != nil {
		t.Fatal(err)
	}
	out := command(t, ctx, ".", []string{"GATEWAY_APOLLO_UPLOAD_TEST=" + string(env)}, node, "--test", "--test-reporter=spec", filepath.Join("apollo", "upload.test.mjs"))
	t.Logf("node --test:\n%s", out)
	pass := regexp.MustCompile(`(?m)^. pass (\d+)$`).FindStringSubmatch(out)
	if pass == nil || pass[1] != strconv.Itoa(uploadTests) || !regexp.MustCompile(`(?m)^. fail 0$`).MatchString(out) {
		t.Errorf("want %d passed upload tests and none failed", uploadTests)
	}
}

// uploadTests is the number of tests in apollo/upload.test.mjs.
const uploadTests = 2

// standInMedia is a STAND-IN for the media store and its processing
// (server.Media over maps) while weibo/media and weibo/media/process are
// built elsewhere: the upload keeps the file's bytes as every variant,
// sized 1 × 1. It serves the client's path through the gateway, not the
// store's rules.
type standInMedia struct {
	feed  *feed.Service
	mu    sync.Mutex
	media map[string]*mediamodel.Media
	data  map[string][]byte
	posts map[weibo.PostID][]string
}

func newStandInMedia(f *feed.Service) *standInMedia {
	return &standInMedia{feed: f, media: map[string]*mediamodel.Media{}, data: map[string][]byte{}, posts: map[weibo.PostID][]string{}}
}

func (s *standInMedia) MediaVariant(_ context.Context, id, _ string) (*server.MediaBlob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.data[id]
	if !ok {
		return nil, weibo.NotFound("no media %s", id)
	}
	return &server.MediaBlob{Data: d, MIME: "image/jpeg", Hash: sha256.Sum256(d)}, nil
}

func (s *standInMedia) Upload(_ context.Context, owner weibo.UserID, data []byte, alt *string) (*mediamodel.Media, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := "media:" + strconv.Itoa(len(s.media)+1)
	m := &mediamodel.Media{ID: id, Owner: owner, Alt: alt, Width: 1, Height: 1, Blurhash: "LEHV6nWB2yk8", MIMEType: "image/jpeg", Bytes: int64(len(data))}
	s.media[id], s.data[id] = m, data
	return m, nil
}

func (s *standInMedia) UpdateAlt(_ context.Context, _ weibo.UserID, id string, alt *string) (*mediamodel.Media, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.media[id]
	if !ok {
		return nil, weibo.NotFoundOn("id", "no such picture")
	}
	m.Alt = alt
	return m, nil
}

func (s *standInMedia) Get(_ context.Context, ids []string) ([]*mediamodel.Media, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*mediamodel.Media, len(ids))
	for i, id := range ids {
		out[i] = s.media[id]
	}
	return out, nil
}

func (s *standInMedia) OfPost(p *feed.Post) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts[p.ID]
}

func (s *standInMedia) Publish(ctx context.Context, author weibo.UserID, content string, ids []string) (*feed.Post, error) {
	p, err := s.feed.Publish(ctx, author, content)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.posts[p.ID] = ids
	s.mu.Unlock()
	return p, nil
}
