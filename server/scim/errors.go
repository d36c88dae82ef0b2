package scim

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	scimerr "github.com/elimity-com/scim/errors"

	"github.com/weibohbase/gateway/weibo"
)

// scimError maps err, a provisioning domain error, to the SCIM error the
// client gets (RFC 7644 §3.12):
//
//   - BAD_USER_INPUT: 400 invalidValue; reason USERNAME_TAKEN,
//     ROLE_NAME_TAKEN: 409 uniqueness; DEPARTMENT_NOT_EMPTY and
//     CONCURRENT_UPDATE (retrying may succeed): 409; VERSION_MISMATCH: 412;
//     IMMUTABLE: 400 mutability;
//   - NOT_FOUND: 404; FORBIDDEN: 403;
//   - a *scimerr.ScimError: itself;
//   - anything else: 500, logged, its detail never shown.
func scimError(ctx context.Context, log *slog.Logger, err error) error {
	if se, ok := errors.AsType[scimerr.ScimError](err); ok {
		return se
	}
	if se, ok := errors.AsType[*scimerr.ScimError](err); ok {
		return *se
	}
	e, ok := errors.AsType[*weibo.Error](err)
	if !ok {
		if ctx.Err() != nil {
			return scimerr.ScimError{Status: http.StatusInternalServerError, Detail: "The request was cancelled or timed out."}
		}
		log.ErrorContext(ctx, "scim: internal error", "err", err)
		return scimerr.ScimErrorInternal
	}
	detail := e.Message
	if e.Field != "" && !strings.Contains(detail, e.Field) {
		detail = e.Field + ": " + detail
	}
	switch e.Code {
	case weibo.CodeNotFound:
		return scimerr.ScimError{Status: http.StatusNotFound, Detail: detail}
	case weibo.CodeForbidden:
		return scimerr.ScimError{Status: http.StatusForbidden, Detail: detail}
	case weibo.CodeBadUserInput:
		switch e.Reason {
		case weibo.ReasonUsernameTaken, weibo.ReasonRoleNameTaken:
			return scimerr.ScimError{Status: http.StatusConflict, ScimType: scimerr.ScimTypeUniqueness, Detail: detail}
		case weibo.ReasonDepartmentNotEmpty, weibo.ReasonConcurrentUpdate:
			return scimerr.ScimError{Status: http.StatusConflict, Detail: detail}
		case weibo.ReasonVersionMismatch:
			return scimerr.ScimError{Status: http.StatusPreconditionFailed, Detail: detail}
		case weibo.ReasonImmutable:
			return scimerr.ScimError{Status: http.StatusBadRequest, ScimType: scimerr.ScimTypeMutability, Detail: detail}
		}
		return scimerr.ScimError{Status: http.StatusBadRequest, ScimType: scimerr.ScimTypeInvalidValue, Detail: detail}
	case weibo.CodeUnavailable:
		return scimerr.ScimError{Status: http.StatusInternalServerError, Detail: detail}
	}
	log.ErrorContext(ctx, "scim: unmapped domain error", "code", e.Code, "err", err)
	return scimerr.ScimErrorInternal
}

// invalidValue is a 400 invalidValue with detail.
func invalidValue(detail string) error {
	return scimerr.ScimError{Status: http.StatusBadRequest, ScimType: scimerr.ScimTypeInvalidValue, Detail: detail}
}

// mutability is a 400 mutability with detail.
func mutability(detail string) error {
	return scimerr.ScimError{Status: http.StatusBadRequest, ScimType: scimerr.ScimTypeMutability, Detail: detail}
}

// notFound is a 404 naming the resource.
func notFound(what, id string) error {
	return scimerr.ScimError{Status: http.StatusNotFound, Detail: what + " " + strconv.Quote(id) + " not found."}
}

// writeError answers se as application/scim+json: the handler's own
// refusals (401, 429, 413) that the library's status table does not
// allow.
func writeError(w http.ResponseWriter, se scimerr.ScimError) {
	raw, _ := json.Marshal(se)
	w.Header().Set("Content-Type", "application/scim+json")
	w.WriteHeader(se.Status)
	_, _ = w.Write(raw)
}

// ifVersion parses an If-Match header into the version it names: W/"n",
// "n" or n; nil when the header is absent or "*". A header naming no
// version of ours can match no version: it answers 412.
func ifVersion(r *http.Request) (*int64, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" || h == "*" {
		return nil, nil
	}
	v := strings.TrimPrefix(h, "W/")
	v = strings.Trim(v, `"`)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, scimerr.ScimError{Status: http.StatusPreconditionFailed, Detail: "If-Match " + weibo.Excerpt(h) + " names no version of this resource."}
	}
	return &n, nil
}

// etag is the weak ETag of version v: W/"v".
func etag(v int64) string { return `W/"` + strconv.FormatInt(v, 10) + `"` }
