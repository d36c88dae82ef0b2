package server

import (
	"github.com/weibohbase/gateway/resolvers"
	"github.com/weibohbase/gateway/weibo/domain"
)

// servicesOf returns what the resolvers call of d: each of d's modules
// behind the resolvers' narrow interface of it, the same services.
func servicesOf(d *domain.Domain) resolvers.Services {
	return resolvers.Services{
		UserSearch:  d,
		Accounts:    d.Accounts,
		Feed:        d.Feed,
		Follows:     d.Follows,
		Timeline:    d.Timeline,
		Notify:      d.Notify,
		Likes:       d.Likes,
		Comments:    d.Comments,
		Reposts:     d.Reposts,
		Topics:      d.Topics,
		Safety:      d.Safety,
		Suspensions: d.Suspensions,
		Reports:     d.Reports,
		Org: resolvers.Org{
			Roles:       d.Org.Roles,
			Departments: d.Org.Departments,
			Members:     d.Org.Members,
			Authz:       d.Org.Authz,
			Bulk:        d.Org.Bulk,
			Audit:       d.Org.Audit,
		},
	}
}
