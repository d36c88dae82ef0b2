package domain_test

import (
	"testing"

	"github.com/weibohbase/gateway/internal/orgtest"
	"github.com/weibohbase/gateway/weibo"
)

// The helpers the weibo, fsck and seed tests share (internal/orgtest).
var (
	uniq     = orgtest.Uniq
	mustUser = orgtest.MustUser
)

func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	if got := weibo.CodeOf(err); got != code {
		t.Fatalf("%s: want code %s, got %v", what, code, err)
	}
}
