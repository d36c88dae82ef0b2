package clients_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
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
