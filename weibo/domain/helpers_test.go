package domain_test

import (
	"github.com/weibohbase/gateway/internal/domaintest"
)

// The helpers the weibo, fsck and seed tests share (internal/domaintest).
var (
	uniq     = domaintest.Uniq
	mustUser = domaintest.MustUser
)
