package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
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
// of a multipart/mixed response, each flushed to the client as it comes;
// once they add up to more than t.maxResponse bytes, a RESPONSE_TOO_LARGE
// error ends the response.
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
	sent := int64(len(data)) // t.maxResponse bounds the payloads' data together
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
		if sent += int64(len(body)); t.maxResponse > 0 && sent > t.maxResponse {
			body, hasNext = tooLargePayload(sent, t.maxResponse), false
		}
	}
}

// tooLargePayload is the last payload of a response whose payloads add
// up to more than limit bytes: a RESPONSE_TOO_LARGE error, and no more.
func tooLargePayload(size, limit int64) []byte {
	e := errorResponse(CodeResponseTooLarge, "the response is larger than the server sends: ask for fewer or smaller items").Errors
	e[0].Extensions["size"] = size
	e[0].Extensions["limit"] = limit
	b, _ := json.Marshal(struct {
		Errors  gqlerror.List `json:"errors"`
		HasNext bool          `json:"hasNext"`
	}{e, false})
	return b
}
