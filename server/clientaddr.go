package server

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

type addrKey struct{}

// clientAddress puts the client's address into the request context, for
// throttling: the connection's remote address or, when header is set (a
// deployment behind a reverse proxy, e.g. "X-Forwarded-For" or
// "X-Real-IP"), the last address in that header — the one the nearest
// proxy wrote; earlier ones are the client's to forge. A missing or
// malformed header falls back to the remote address. IPv6 clients are
// grouped by /64, the block one host usually holds.
func clientAddress(header string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			addr := ""
			if header != "" {
				addr = lastAddr(r.Header.Values(header))
			}
			if addr == "" {
				addr = parseAddr(r.RemoteAddr)
			}
			if addr == "" {
				addr = "unknown"
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), addrKey{}, addr)))
		})
	}
}

// clientAddr returns the client address clientAddress found ("" outside a request).
func clientAddr(ctx context.Context) string {
	a, _ := ctx.Value(addrKey{}).(string)
	return a
}

// lastAddr returns the last address of comma-separated header values.
func lastAddr(values []string) string {
	if len(values) == 0 {
		return ""
	}
	v := values[len(values)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return parseAddr(strings.TrimSpace(v))
}

// parseAddr reads "ip", "ip:port" or "[ipv6]:port" and returns the throttling
// key of the address ("" when it is none): the IPv4 address, or the IPv6 /64.
func parseAddr(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil {
		host, _, herr := net.SplitHostPort(s)
		if herr != nil {
			return ""
		}
		if a, err = netip.ParseAddr(host); err != nil {
			return ""
		}
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
