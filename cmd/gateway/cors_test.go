package main

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCORSOriginsFlag: serve takes the allowed origins from
// GATEWAY_CORS_ORIGINS (a preflight from an allowed origin gets
// Access-Control-Allow-Origin, one from another origin does not), the
// --cors-origins flag wins over it, and a malformed origin stops serve with
// an error naming the flag.
func TestCORSOriginsFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	if out, err := exec.Command(bin, "serve", "--data", "", "--cors-origins", "localhost:3000").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "--cors-origins") {
		t.Fatalf("serve with a malformed origin: %v\n%s", err, out)
	}

	for _, c := range []struct {
		name    string
		env     string
		args    []string
		allowed []string
		refused []string
	}{
		{"env", "http://localhost:*", nil, []string{"http://localhost:5173"}, []string{"https://app.example.com", "http://evil.example"}},
		{"flag wins", "http://localhost:*", []string{"--cors-origins", "https://app.example.com"}, []string{"https://app.example.com"}, []string{"http://localhost:5173"}},
		{"default", "", nil, nil, []string{"http://localhost:5173"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append(os.Environ(), "GATEWAY_JWT_SECRET=cors-test-secret-cors-test-secret-cors", "GATEWAY_CORS_ORIGINS="+c.env)
			base := startServe(t, bin, env, append([]string{"--data", ""}, c.args...)...).base
			preflight := func(origin string) string {
				req, _ := http.NewRequest(http.MethodOptions, base+"/graphql", nil)
				req.Header.Set("Origin", origin)
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.Header.Get("Access-Control-Allow-Origin")
			}
			for _, o := range c.allowed {
				if got := preflight(o); got != o {
					t.Errorf("preflight from %s: Access-Control-Allow-Origin %q, want it", o, got)
				}
			}
			for _, o := range c.refused {
				if got := preflight(o); got != "" {
					t.Errorf("preflight from %s: Access-Control-Allow-Origin %q, want none", o, got)
				}
			}
		})
	}
}
