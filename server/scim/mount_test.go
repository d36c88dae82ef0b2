package scim_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/provision/clients"
)

// TestMountedInGateway reaches /scim/v2 through the whole gateway
// (server.New): a provisioning client's token is good there, the token a
// GraphQL login gives is not.
func TestMountedInGateway(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		g := gatewaytest.Start(t, b.Open(t))
		ctx := t.Context()
		token, _, err := clients.New(g.Svc.Store(), nil).Create(ctx, "gw-"+time.Now().Format("150405.000000"), clients.DefaultRank)
		if err != nil {
			t.Fatal(err)
		}
		jwt, err := g.Tokens.Issue(1, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			token string
			want  int
		}{{token, http.StatusOK}, {jwt, http.StatusUnauthorized}, {"", http.StatusUnauthorized}} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+"/scim/v2/ServiceProviderConfig", nil)
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != c.want || resp.Header.Get("Content-Type") != "application/scim+json" {
				t.Errorf("token %.12q: %d %q, want %d; %s", c.token, resp.StatusCode, resp.Header.Get("Content-Type"), c.want, raw)
			}
		}
	})
}
