package scim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	scimerr "github.com/elimity-com/scim/errors"

	"github.com/weibohbase/gateway/weibo"
)

func TestScimError(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bad := func(reason string) error {
		return fmt.Errorf("create user: %w", &weibo.Error{Code: weibo.CodeBadUserInput, Field: "userName", Reason: reason, Message: "no"})
	}
	for _, c := range []struct {
		err      error
		status   int
		scimType scimerr.ScimType
	}{
		{bad(""), http.StatusBadRequest, scimerr.ScimTypeInvalidValue},
		{bad(weibo.ReasonUsernameTaken), http.StatusConflict, scimerr.ScimTypeUniqueness},
		{bad(weibo.ReasonRoleNameTaken), http.StatusConflict, scimerr.ScimTypeUniqueness},
		{bad(weibo.ReasonDepartmentNotEmpty), http.StatusConflict, ""},
		{bad(weibo.ReasonConcurrentUpdate), http.StatusConflict, ""},
		{bad(weibo.ReasonVersionMismatch), http.StatusPreconditionFailed, ""},
		{bad(weibo.ReasonImmutable), http.StatusBadRequest, scimerr.ScimTypeMutability},
		{bad(weibo.ReasonDepartmentCycle), http.StatusBadRequest, scimerr.ScimTypeInvalidValue},
		{weibo.NotFound("user 7 not found"), http.StatusNotFound, ""},
		{weibo.Forbidden("rank"), http.StatusForbidden, ""},
		{scimerr.ScimErrorTooMany, http.StatusBadRequest, scimerr.ScimTypeTooMany},
		{errors.New("hbase: region offline at host-7"), http.StatusInternalServerError, ""},
	} {
		se, ok := scimError(context.Background(), log, c.err).(scimerr.ScimError)
		if !ok || se.Status != c.status || se.ScimType != c.scimType {
			t.Errorf("%v: %+v, want %d %q", c.err, se, c.status, c.scimType)
		}
		if c.status == http.StatusInternalServerError && se.Detail != "" {
			t.Errorf("a store error's detail is shown: %q", se.Detail)
		}
	}
}

func TestIfVersion(t *testing.T) {
	for h, want := range map[string]string{`W/"7"`: "7", `"7"`: "7", "7": "7", "": "nil", "*": "nil", `W/"x"`: "412", `"-1"`: "412"} {
		r := httptest.NewRequest(http.MethodPut, "/Users/1", nil)
		if h != "" {
			r.Header.Set("If-Match", h)
		}
		v, err := ifVersion(r)
		got := "nil"
		switch {
		case err != nil:
			if se, ok := err.(scimerr.ScimError); ok {
				got = fmt.Sprint(se.Status)
			}
		case v != nil:
			got = fmt.Sprint(*v)
		}
		if got != want {
			t.Errorf("If-Match %q: %s, want %s", h, got, want)
		}
	}
}
