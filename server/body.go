package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/weibo"
)

// maxJSONDepth bounds the nesting of a request body's JSON (objects and
// arrays): the schema's arguments are scalars, so real requests nest a few
// levels; deeper bodies are refused before they are decoded.
const maxJSONDepth = 64

// httpError is a request the transport refuses before any GraphQL work:
// an HTTP status and a GraphQL error with extensions.code.
type httpError struct {
	status  int
	code    string
	message string
	// cause, when set, is the read error behind the refusal.
	cause error
}

func (e *httpError) Error() string { return e.message }

func badRequest(format string, args ...any) *httpError {
	return &httpError{status: http.StatusBadRequest, code: CodeBadRequest, message: fmt.Sprintf(format, args...)}
}

// wireParams is one GraphQL request as JSON carries it.
type wireParams struct {
	Query         *string        `json:"query"`
	OperationName *string        `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
	// DocumentID is the persisted documents proposal's documentId
	// ("sha256:<hex>"), kept in the params' extensions (setDocumentID).
	DocumentID *string `json:"documentId"`
}

// decodeBody decodes a POST body of media type application/json: one
// GraphQL request (an object with query, operationName, variables,
// extensions and documentId), or a batch (a JSON array of such objects, batch true) of at
// most maxBatch requests (0: batches are refused). Numbers in variables
// decode as json.Number. It never echoes the body: errors (*httpError,
// status 400) name what is wrong in a few words. Checked before decoding:
// the body is valid UTF-8 with no unpaired surrogate escapes (code
// BAD_USER_INPUT: encoding/json would silently turn both into U+FFFD) and
// nests at most 64 levels (BAD_REQUEST).
func decodeBody(body []byte, maxBatch int) (params []*graphql.RawParams, batch bool, herr *httpError) {
	if herr := checkJSON(body); herr != nil {
		return nil, false, herr
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 {
		return nil, false, badRequest("the request body is empty: send a JSON object with a query")
	}
	switch body[0] {
	case '{':
		p, herr := decodeOne(body)
		if herr != nil {
			return nil, false, herr
		}
		return []*graphql.RawParams{p}, false, nil
	case '[':
		var items []json.RawMessage
		if herr := decodeStrict(body, &items); herr != nil {
			return nil, true, herr
		}
		if maxBatch <= 0 {
			return nil, true, badRequest("batching is off: send one JSON object per request")
		}
		if len(items) == 0 || len(items) > maxBatch {
			return nil, true, badRequest("a batch must hold 1 to %d requests, got %d", maxBatch, len(items))
		}
		params = make([]*graphql.RawParams, len(items))
		for i, it := range items {
			if it = bytes.TrimLeft(it, " \t\r\n"); len(it) == 0 || it[0] != '{' {
				return nil, true, badRequest("batch item %d is not a JSON object", i)
			}
			p, herr := decodeOne(it)
			if herr != nil {
				herr.message = fmt.Sprintf("batch item %d: %s", i, herr.message)
				return nil, true, herr
			}
			params[i] = p
		}
		return params, true, nil
	}
	return nil, false, badRequest("the request body must be a JSON object")
}

func decodeOne(b []byte) (*graphql.RawParams, *httpError) {
	var w wireParams
	if herr := decodeStrict(b, &w); herr != nil {
		return nil, herr
	}
	p := &graphql.RawParams{Variables: w.Variables, Extensions: w.Extensions}
	if w.DocumentID != nil {
		setDocumentID(p, *w.DocumentID)
	}
	if w.Query != nil {
		p.Query = *w.Query
	}
	if w.OperationName != nil {
		p.OperationName = *w.OperationName
	}
	if p.Query == "" && len(p.Extensions) == 0 {
		return nil, badRequest("the request has no query")
	}
	return p, nil
}

// decodeStrict decodes exactly one JSON value from b into v, numbers as
// json.Number, and turns decoding errors into short messages.
func decodeStrict(b []byte, v any) *httpError {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("the request body is not valid JSON: data after the top-level value")
	}
	return nil
}

// jsonError describes a decoding error without quoting the input.
func jsonError(err error) *httpError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("the request body is not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("the request body must be a JSON object, not a %s", typ.Value)
		}
		return badRequest("%s must not be a JSON %s", weibo.Excerpt(typ.Field), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest("the request body is not valid JSON: it ends too early")
	}
	return badRequest("the request body is not valid JSON")
}

// checkJSON scans b once, outside and inside strings, without decoding:
// valid UTF-8, no unpaired UTF-16 surrogate escapes in strings, at most
// maxJSONDepth levels of nesting. It does not check the rest of the syntax.
func checkJSON(b []byte) *httpError {
	if !utf8.Valid(b) {
		return &httpError{status: http.StatusBadRequest, code: weibo.CodeBadUserInput, message: "the request body is not valid UTF-8"}
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			if depth++; depth > maxJSONDepth {
				return badRequest("the request body nests more than %d levels of JSON", maxJSONDepth)
			}
		case '}', ']':
			depth--
		case '"':
			end, herr := scanString(b, i+1)
			if herr != nil {
				return herr
			}
			i = end
		}
	}
	return nil
}

// scanString scans a JSON string whose content starts at b[i] and returns
// the index of its closing quote (len(b) when unterminated: the decoder
// reports that). It refuses a \uD800-\uDFFF escape not part of a pair.
func scanString(b []byte, i int) (int, *httpError) {
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i, nil
		case '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				r, ok := hex4(b, i+2)
				if ok && r >= 0xD800 && r <= 0xDFFF {
					if r >= 0xDC00 {
						return 0, badUTF16
					}
					lo, ok := rune(0), false
					if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
						lo, ok = hex4(b, i+8)
					}
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return 0, badUTF16
					}
					i += 6 // the pair's second escape is skipped below
				}
			}
			i++ // the escaped character
		}
	}
	return len(b), nil
}

var badUTF16 = &httpError{status: http.StatusBadRequest, code: weibo.CodeBadUserInput,
	message: "the request body has a string with an unpaired UTF-16 surrogate escape (not valid Unicode)"}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
