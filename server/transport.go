package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/internal/respbuf"
	"github.com/weibohbase/gateway/weibo"
)

// Response media types (GraphQL over HTTP).
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// maxErrors is how many errors a response lists; the count of the others
// goes into extensions.errorsOmitted.
const maxErrors = 100

// httpTransport serves GraphQL over plain HTTP as the GraphQL-over-HTTP
// spec says: GET (queries only) and POST with an application/json body (one
// request, or a JSON array batch of at most maxBatch) or a multipart/form-data
// body of the GraphQL multipart request spec (file uploads, readMultipart);
// responses in
// application/json (GraphQL errors with HTTP 200) or, when the Accept header
// prefers it, application/graphql-response+json (request errors with HTTP
// 400). It refuses everything else with an HTTP status and a JSON error
// body whose extensions.code says why: 405, 406, 413, 415, 400. It takes
// every request that is not OPTIONS or a WebSocket upgrade, so no request
// falls through to gqlgen's code-less "transport not supported".
type httpTransport struct {
	maxBody int64
	// maxUpload bounds a multipart (file upload) body; maxBody bounds its
	// operations part.
	maxUpload   int64
	maxResponse int64
	maxBatch    int
	readTimeout time.Duration
	// budget, when set, is charged a node per KiB of request body before
	// the body is read: a client cannot make the gateway read and decode
	// large bodies faster than its budget allows.
	budget *budget
	now    func() time.Time
}

// bodyNodeBytes is how many bytes of request body cost one node of budget.
const bodyNodeBytes = 1 << 10

var _ graphql.Transport = httpTransport{}

// Supports implements graphql.Transport.
func (t httpTransport) Supports(r *http.Request) bool {
	return r.Method != http.MethodOptions && !isWebSocketUpgrade(r)
}

// isWebSocketUpgrade tells a well-formed WebSocket handshake (for gqlgen's
// WebSocket transport) from everything else.
func isWebSocketUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		headerHasToken(r.Header, "Connection", "upgrade") &&
		r.Header.Get("Sec-Websocket-Key") != "" && r.Header.Get("Sec-Websocket-Version") == "13"
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// Do implements graphql.Transport.
func (t httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	media, ok := negotiate(r.Header.Values("Accept"))
	multipart := acceptsMultipart(r.Header.Values("Accept"))
	if !ok && multipart {
		media, ok = mediaJSON, true
	}
	if !ok {
		writeHTTPError(w, r, &httpError{status: http.StatusNotAcceptable, code: CodeNotAcceptable,
			message: "the Accept header must allow application/graphql-response+json or application/json"})
		return
	}
	var (
		params []*graphql.RawParams
		batch  bool
		herr   *httpError
	)
	switch r.Method {
	case http.MethodGet:
		var p *graphql.RawParams
		if p, herr = paramsFromURL(r.URL.RawQuery); herr == nil {
			params = []*graphql.RawParams{p}
		}
	case http.MethodPost:
		if isMultipart(r.Header.Get("Content-Type")) {
			var p *graphql.RawParams
			if p, herr = t.readMultipart(w, r); herr == nil {
				params = []*graphql.RawParams{p}
			}
			break
		}
		if herr = checkContentType(r.Header.Get("Content-Type")); herr != nil {
			break
		}
		var body []byte
		if body, herr = t.readBody(w, r); herr == nil {
			params, batch, herr = decodeBody(body, t.maxBatch)
		}
	default:
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		herr = &httpError{status: http.StatusMethodNotAllowed, code: CodeMethodNotAllowed,
			message: "GraphQL is served over GET (queries) and POST"}
	}
	if herr != nil {
		writeHTTPError(w, r, herr)
		return
	}

	ctx := r.Context()
	status := http.StatusOK
	out := make([]*graphql.Response, len(params))
	var rest func() *graphql.Response
	for i, p := range params {
		p.Headers = r.Header
		var st int
		out[i], st, rest = t.run(ctx, exec, p, r.Method == http.MethodGet, media == mediaGraphQLResponse, multipart && !batch)
		if !batch {
			status = st
		}
		if st == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", "POST")
		}
	}
	if !batch && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		status = http.StatusGatewayTimeout
	}
	if wait := stateOf(ctx).retry(); wait > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
		if !batch {
			status = http.StatusTooManyRequests
		}
	}
	if rest != nil {
		t.writeMultipart(w, status, out[0], rest)
		return
	}
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	if batch {
		items := make([]json.RawMessage, len(out))
		for i, resp := range out {
			head, data, tail := t.encode(resp)
			items[i] = slices.Concat(head, data, tail)
			respbuf.Release(resp.Data)
		}
		b, _ := json.Marshal(items)
		w.WriteHeader(status)
		_, _ = w.Write(b)
		return
	}
	head, data, tail := t.encode(out[0])
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(data)+len(tail)))
	w.WriteHeader(status)
	writeResponse(w, head, data, tail)
	// The data was written (copied): its buffer (package respbuf, from the
	// generated Exec) serves another response.
	respbuf.Release(out[0].Data)
}

// writeResponse writes head, data and tail, the response body encode
// returned, in one Write when they add up to at most respbuf.MaxPooled
// bytes (joined in a buffer of package respbuf): net/http sends one Write
// of a body through its 4 KiB connection buffer in two socket writes (the
// buffer with the headers, then the rest), and three Writes in three (a
// home-timeline page of 10 KiB: the last, tail's few bytes, after the
// handler returned). A larger response is written as it is, without the
// copy.
func writeResponse(w io.Writer, head, data, tail []byte) {
	if len(head)+len(data)+len(tail) > respbuf.MaxPooled {
		for _, b := range [][]byte{head, data, tail} {
			if _, err := w.Write(b); err != nil {
				return
			}
		}
		return
	}
	p := respbuf.Get()
	*p = append(append(append(*p, head...), data...), tail...)
	_, _ = w.Write(*p)
	respbuf.Put(p)
}

// run executes one request and returns its response and HTTP status. An
// operation with @defer or @stream is executed whole unless incremental
// (the client accepts multipart/mixed): then rest returns its subsequent
// payloads (nil after the last).
func (t httpTransport) run(ctx context.Context, exec graphql.GraphExecutor, p *graphql.RawParams, get, graphqlResponse, incremental bool) (
	resp *graphql.Response, status int, rest func() *graphql.Response) {
	now := graphql.Now()
	p.ReadTime = graphql.TraceTiming{Start: now, End: now}
	opCtx, errs := exec.CreateOperationContext(ctx, p)
	if errs != nil {
		status := http.StatusOK
		if graphqlResponse {
			status = http.StatusBadRequest
		}
		for _, e := range errs {
			switch e.Extensions["code"] {
			case CodeRateLimited:
				status = http.StatusTooManyRequests
			case CodePersistedDocumentRequired:
				status = http.StatusBadRequest
			}
		}
		return exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs), status, nil
	}
	switch op := opCtx.Operation.Operation; {
	case op == ast.Mutation && get:
		return errorResponse(CodeMethodNotAllowed, "a mutation must be sent with POST"), http.StatusMethodNotAllowed, nil
	case op == ast.Subscription:
		status := http.StatusOK
		if graphqlResponse {
			status = http.StatusBadRequest
		}
		return errorResponse(CodeBadRequest, "subscriptions are served over WebSocket (graphql-transport-ws or graphql-ws) at /graphql"), status, nil
	case op == ast.Query && isIncremental(opCtx.Doc, opCtx.Operation):
		if !incremental {
			withoutIncremental(opCtx)
			break
		}
		responses, ctx := incrementalExec{exec}.DispatchOperation(ctx, opCtx)
		return responses(ctx), http.StatusOK, func() *graphql.Response { return responses(ctx) }
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	return responses(ctx), http.StatusOK, nil
}

// encode marshals resp, listing at most maxErrors errors and refusing a
// response whose data is over maxResponse bytes. The response is head +
// data + tail: data is the data gqlgen encoded (megabytes for a big query),
// not re-validated, and copied only when writeResponse joins a response of
// up to respbuf.MaxPooled bytes into one Write; no "data" entry (data nil)
// when the request failed before execution (the spec's request error).
func (t httpTransport) encode(resp *graphql.Response) (head, data, tail []byte) {
	if resp == nil {
		resp = errorResponse(CodeInternal, "no response")
	}
	if n := len(resp.Errors); n > maxErrors {
		resp.Errors = resp.Errors[:maxErrors]
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["errorsOmitted"] = n - maxErrors
	}
	if size := int64(len(resp.Data)); t.maxResponse > 0 && size > t.maxResponse {
		big := errorResponse(CodeResponseTooLarge, "the response is larger than the server sends: ask for fewer or smaller items")
		big.Errors[0].Extensions["size"] = size
		big.Errors[0].Extensions["limit"] = t.maxResponse
		big.Extensions = resp.Extensions
		resp = big
	}
	var buf []byte
	sep := ""
	field := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			b, _ = json.Marshal(errorResponse(CodeInternal, "the response could not be encoded").Errors)
		}
		buf = append(append(append(buf, sep+`"`...), name...), `":`...)
		buf = append(buf, b...)
		sep = ","
	}
	buf = append(buf, '{')
	if len(resp.Errors) > 0 {
		field("errors", resp.Errors)
	}
	if resp.Data != nil {
		buf = append(buf, sep+`"data":`...)
		data = resp.Data
		sep = ","
	}
	head, buf = buf, nil
	if len(resp.Extensions) > 0 {
		field("extensions", resp.Extensions)
	}
	tail = append(buf, '}')
	return head, data, tail
}

// wireResponse is an error-only response as sent.
type wireResponse struct {
	Errors gqlerror.List `json:"errors,omitempty"`
}

// errorResponse is a response with one error of code, which it counts in
// gateway_graphql_errors_total: every caller returns it to the client.
func errorResponse(code, msg string) *graphql.Response {
	countErrorCode(code)
	return &graphql.Response{Errors: gqlerror.List{{Message: msg, Extensions: map[string]any{"code": code}}}}
}

// writeHTTPError writes a refusal as a GraphQL response with one error.
func writeHTTPError(w http.ResponseWriter, r *http.Request, e *httpError) {
	if wait := stateOf(r.Context()).retry(); wait > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
	}
	b, _ := json.Marshal(wireResponse{Errors: errorResponse(e.code, e.message).Errors})
	w.Header().Set("Content-Type", mediaJSON+"; charset=utf-8")
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// readBody reads the body, at most maxBody bytes and within readTimeout.
func (t httpTransport) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *httpError) {
	tooLarge := &httpError{status: http.StatusRequestEntityTooLarge, code: CodePayloadTooLarge,
		message: "the request body is larger than " + strconv.FormatInt(t.maxBody, 10) + " bytes"}
	limit := t.maxBody
	if limit <= 0 {
		limit = math.MaxInt64
	}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	if herr := t.chargeBody(r, r.ContentLength); herr != nil {
		return nil, herr
	}
	if t.readTimeout > 0 {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(t.readTimeout))
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge
	case err != nil:
		return nil, badRequest("the request body could not be read")
	}
	if r.ContentLength < 0 { // chunked: charged once its length is known
		if herr := t.chargeBody(r, int64(len(body))); herr != nil {
			return nil, herr
		}
	}
	return body, nil
}

// chargeBody spends a node of the client's budget per KiB of a body of n
// bytes; a spent budget is RATE_LIMITED (HTTP 429).
func (t httpTransport) chargeBody(r *http.Request, n int64) *httpError {
	if t.budget == nil || n < bodyNodeBytes {
		return nil
	}
	wait, _ := t.budget.take(clientKey(r.Context()), n/bodyNodeBytes, t.now())
	if wait <= 0 {
		return nil
	}
	stateOf(r.Context()).retryAfter(wait)
	return &httpError{status: http.StatusTooManyRequests, code: CodeRateLimited,
		message: "this client's query budget is spent (request bodies cost a node per KiB): retry later"}
}

// checkContentType accepts application/json, with no charset or utf-8.
func checkContentType(ct string) *httpError {
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == mediaJSON {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	return &httpError{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedMediaType,
		message: "a POST body must be application/json (UTF-8), or multipart/form-data for file uploads"}
}

// negotiate picks the response media type from Accept headers: the
// acceptable one with the highest q, application/graphql-response+json on
// a tie; no header means application/json. ok is false when neither is
// acceptable.
func negotiate(accept []string) (media string, ok bool) {
	if len(accept) == 0 {
		return mediaJSON, true
	}
	qJSON, qGQL := -1.0, -1.0
	for _, h := range accept {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(v, 64); err != nil {
					continue
				}
			}
			switch mt {
			case mediaGraphQLResponse:
				qGQL = max(qGQL, q)
			case mediaJSON, "application/*", "*/*":
				qJSON = max(qJSON, q)
			}
		}
	}
	switch {
	case qGQL > 0 && qGQL >= qJSON:
		return mediaGraphQLResponse, true
	case qJSON > 0:
		return mediaJSON, true
	}
	if strings.TrimSpace(strings.Join(accept, "")) == "" {
		return mediaJSON, true
	}
	return "", false
}

// paramsFromURL reads a GET request's query, operationName, variables,
// extensions (the last two JSON, checked like a POST body) and documentId.
func paramsFromURL(rawQuery string) (*graphql.RawParams, *httpError) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, badRequest("the URL query string is malformed")
	}
	p := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
	for _, f := range []struct {
		name string
		dst  *map[string]any
	}{{"variables", &p.Variables}, {"extensions", &p.Extensions}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		if herr := checkJSON([]byte(v)); herr != nil {
			return nil, herr
		}
		if herr := decodeStrict([]byte(v), f.dst); herr != nil {
			herr.message = f.name + ": " + herr.message
			return nil, herr
		}
	}
	if q.Has("documentId") {
		setDocumentID(p, q.Get("documentId"))
	}
	if p.Query == "" && len(p.Extensions) == 0 {
		return nil, badRequest("the request has no query: pass ?query=")
	}
	if !utf8.ValidString(p.Query) || !utf8.ValidString(p.OperationName) {
		return nil, &httpError{status: http.StatusBadRequest, code: weibo.CodeBadUserInput, message: "the query is not valid UTF-8"}
	}
	return p, nil
}
