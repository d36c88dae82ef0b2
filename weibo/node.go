package weibo

// Node is an object with a global id, the schema's Node interface (Relay's
// Global Object Identification): *User, *feed.Post, *comment.Comment,
// *org.Role, *org.Department, *notify.Notification or *report.Report.
// Their ids never collide (see NodeID); the business areas read them back
// by id (account's GetUsers, feed's GetPosts and GetComments, org's
// GetRoles and GetDepartments, report's Get).
type Node interface {
	// NodeID returns the object's global id.
	NodeID() NodeID
}
