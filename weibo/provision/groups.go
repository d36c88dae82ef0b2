package provision

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
)

var errTodo = weibo.NotFound("groups are not provisioned yet")

// CreateGroup creates a group for client c.
func (s *Service) CreateGroup(ctx context.Context, c Client, in GroupInput) (*Group, error) {
	return nil, errTodo
}

// GetGroup returns group id.
func (s *Service) GetGroup(ctx context.Context, id string, withMembers bool) (*Group, error) {
	return nil, errTodo
}

// ReplaceGroup replaces group id.
func (s *Service) ReplaceGroup(ctx context.Context, c Client, id string, in GroupInput, ifVersion *int64) (*Group, error) {
	return nil, errTodo
}

// PatchGroup changes group id.
func (s *Service) PatchGroup(ctx context.Context, c Client, id string, ch GroupChange, ifVersion *int64) (*Group, error) {
	return nil, errTodo
}

// DeleteGroup deletes group id.
func (s *Service) DeleteGroup(ctx context.Context, c Client, id string, ifVersion *int64) error {
	return errTodo
}

// ListGroups lists every group.
func (s *Service) ListGroups(ctx context.Context, withMembers bool) ([]*Group, error) {
	return nil, errTodo
}

// GroupsByExternalID lists the groups of externalId ext.
func (s *Service) GroupsByExternalID(ctx context.Context, ext string) ([]*Group, error) {
	return nil, errTodo
}
