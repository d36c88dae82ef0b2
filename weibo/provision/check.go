package provision

import (
	"context"

	"github.com/weibohbase/gateway/weibo/check"
)

func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: "provision", Start: func(p *check.Pass) check.Run {
		return check.Run{Check: func(ctx context.Context) error { return nil }}
	}}
}
