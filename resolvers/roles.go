package resolvers

import "github.com/weibohbase/gateway/weibo"

// parseUserRole parses the userId and roleId arguments.
func parseUserRole(userID, roleID string) (user weibo.UserID, role weibo.RoleID, err error) {
	if user, err = parseID[weibo.UserID]("userId", userID); err != nil {
		return user, role, err
	}
	role, err = parseID[weibo.RoleID]("roleId", roleID)
	return user, role, err
}
