package server

import (
	"bytes"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// mediaMultipart is the media type of the GraphQL multipart request spec
// (file uploads): https://github.com/jaydenseric/graphql-multipart-request-spec.
const mediaMultipart = "multipart/form-data"

// maxUploadFiles bounds the file parts of one multipart request: the
// pictures of a post.
const maxUploadFiles = 9

// isMultipart tells a multipart/form-data Content-Type.
func isMultipart(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == mediaMultipart
}

// hasPreflightHeader tells a request carrying a header a browser sends
// cross-origin only after a CORS preflight: Apollo-Require-Preflight (any
// value) or a non-empty X-Apollo-Operation-Name. A multipart/form-data POST
// is a "simple" request a form on another site can send without a
// preflight; with one of these headers it cannot.
func hasPreflightHeader(h http.Header) bool {
	return len(h.Values("Apollo-Require-Preflight")) > 0 || strings.TrimSpace(h.Get("X-Apollo-Operation-Name")) != ""
}

// readMultipart reads a POST of the GraphQL multipart request spec: the
// part "operations" (one GraphQL request as JSON, checked as a JSON body
// and at most maxBody bytes; batches are refused), then "map" (file part
// name -> the variable paths it fills, e.g. {"0": ["variables.file"]}),
// then at most maxUploadFiles file parts, each read whole into memory and
// set at its paths as a graphql.Upload. The whole body is at most
// maxUpload bytes (PAYLOAD_TOO_LARGE, HTTP 413) and read within
// readTimeout; it costs budget as a JSON body does. Errors are *httpError:
// BAD_REQUEST (HTTP 400) for a request without the preflight header (see
// hasPreflightHeader) and for a malformed form.
func (t httpTransport) readMultipart(w http.ResponseWriter, r *http.Request) (*graphql.RawParams, *httpError) {
	if !hasPreflightHeader(r.Header) {
		return nil, badRequest("a multipart request must carry the header Apollo-Require-Preflight or a non-empty X-Apollo-Operation-Name (a guard against cross-site forms)")
	}
	limit := t.maxUpload
	if limit <= 0 {
		limit = math.MaxInt64
	}
	tooLarge := &httpError{status: http.StatusRequestEntityTooLarge, code: CodePayloadTooLarge,
		message: "the multipart request body is larger than " + strconv.FormatInt(t.maxUpload, 10) + " bytes"}
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
	body := &countingReader{r: http.MaxBytesReader(w, r.Body, limit)}
	r.Body = io.NopCloser(body)
	p, herr := t.parseMultipart(r)
	if herr != nil {
		var mbe *http.MaxBytesError
		if errors.As(herr.cause, &mbe) {
			return nil, tooLarge
		}
		return nil, herr
	}
	if r.ContentLength < 0 { // chunked: charged once its length is known
		if herr := t.chargeBody(r, body.n); herr != nil {
			return nil, herr
		}
	}
	return p, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (t httpTransport) parseMultipart(r *http.Request) (*graphql.RawParams, *httpError) {
	readErr := func(what string, err error) *httpError {
		herr := badRequest("the multipart request body could not be read (%s)", what)
		herr.cause = err
		return herr
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, badRequest("the multipart request body is malformed: %s", "no boundary")
	}
	jsonLimit := t.maxBody
	if jsonLimit <= 0 {
		jsonLimit = math.MaxInt64
	}
	part, err := mr.NextPart()
	if err != nil {
		return nil, readErr("operations", err)
	}
	if part.FormName() != "operations" {
		return nil, badRequest("the first part of a multipart request must be \"operations\"")
	}
	ops, err := io.ReadAll(io.LimitReader(part, jsonLimit+1))
	if err != nil {
		return nil, readErr("operations", err)
	}
	if int64(len(ops)) > jsonLimit {
		return nil, &httpError{status: http.StatusRequestEntityTooLarge, code: CodePayloadTooLarge,
			message: "the operations part is larger than " + strconv.FormatInt(jsonLimit, 10) + " bytes"}
	}
	params, batch, herr := decodeBody(ops, 0)
	if batch {
		return nil, badRequest("operations must be one GraphQL request: batches are not served in multipart requests")
	}
	if herr != nil {
		herr.message = "operations: " + herr.message
		return nil, herr
	}
	p := params[0]

	if part, err = mr.NextPart(); err != nil {
		return nil, readErr("map", err)
	}
	if part.FormName() != "map" {
		return nil, badRequest("the second part of a multipart request must be \"map\"")
	}
	raw, err := io.ReadAll(io.LimitReader(part, jsonLimit+1))
	if err != nil {
		return nil, readErr("map", err)
	}
	if herr := checkJSON(raw); herr != nil {
		return nil, herr
	}
	var files map[string][]string
	if herr := decodeStrict(raw, &files); herr != nil {
		herr.message = "map: " + herr.message
		return nil, herr
	}
	if len(files) > maxUploadFiles {
		return nil, badRequest("a multipart request carries at most %d files, the map names %d", maxUploadFiles, len(files))
	}
	for {
		part, err = mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, readErr("a file", err)
		}
		name := part.FormName()
		paths, ok := files[name]
		if !ok || len(paths) == 0 {
			return nil, badRequest("the map names no variable for the file part %q", shorten(name))
		}
		delete(files, name)
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, readErr("file "+shorten(name), err)
		}
		for _, path := range paths {
			up := graphql.Upload{File: bytes.NewReader(data), Size: int64(len(data)),
				Filename: part.FileName(), ContentType: part.Header.Get("Content-Type")}
			if gerr := p.AddUpload(up, name, path); gerr != nil {
				return nil, badRequest("map: %s", gerr.Message)
			}
		}
	}
	for name := range files {
		return nil, badRequest("the map names the file part %q, which the request does not carry", shorten(name))
	}
	return p, nil
}
