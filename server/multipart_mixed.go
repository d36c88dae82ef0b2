package server

import (
	"bytes"
	"net/http"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

// mixedBoundary is the boundary of a multipart/mixed response; mediaMixed
// its Content-Type, the incremental delivery format Apollo Client and
// Relay parse (payloads of deferSpec=20220824: the initial one with data
// and hasNext, then {"incremental": [...], "hasNext": …}).
const (
	mixedBoundary = "-"
	mediaMixed    = `multipart/mixed; boundary="` + mixedBoundary + `"; deferSpec=20220824`
)

// acceptsMultipart tells whether an Accept header names multipart/mixed:
// the client parses incremental delivery.
func acceptsMultipart(accept []string) bool {
	for _, v := range accept {
		for _, r := range strings.Split(v, ",") {
			media, _, _ := strings.Cut(r, ";")
			if strings.EqualFold(strings.TrimSpace(media), "multipart/mixed") {
				return true
			}
		}
	}
	return false
}

// writeMultipart writes first, the initial payload of an operation with
// @defer or @stream, and the subsequent payloads rest returns as the parts
// of a multipart/mixed response, each flushed to the client as it comes.
func (t httpTransport) writeMultipart(w http.ResponseWriter, status int, first *graphql.Response, rest func() *graphql.Response) {
	w.Header().Set("Content-Type", mediaMixed)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	rc := http.NewResponseController(w) // through the middlewares' writers
	flush := func() { _ = rc.Flush() }
	hasNext := first != nil && first.HasNext != nil && *first.HasNext
	head, data, tail := t.encode(first)
	body := slices.Concat(head, data, tail[:len(tail)-1])
	if hasNext {
		body = append(body, `,"hasNext":true}`...)
	} else {
		body = append(body, `,"hasNext":false}`...)
	}
	if _, err := w.Write([]byte("\r\n--" + mixedBoundary + "\r\n")); err != nil {
		return
	}
	for {
		part := slices.Concat([]byte("Content-Type: application/json; charset=utf-8\r\n\r\n"), body, []byte("\r\n--"+mixedBoundary))
		if hasNext {
			part = append(part, "\r\n"...)
		} else {
			part = append(part, "--\r\n"...)
		}
		if _, err := w.Write(part); err != nil {
			return
		}
		flush()
		if !hasNext {
			return
		}
		r := rest()
		if body = rawPayloadOf(r); body == nil {
			body = []byte(`{"hasNext":false}`)
		}
		hasNext = bytes.HasSuffix(body, []byte(`"hasNext":true}`))
	}
}
