package weibo

// Node is an object with a global id, the schema's Node interface (Relay's
// Global Object Identification): *User, *Post, *Role or *Department. Their
// ids never collide (see NodeID); Service.GetUsers, GetPosts, GetRoles and
// GetDepartments read them back by id.
type Node interface {
	// NodeID returns the object's global id.
	NodeID() NodeID
}

// NodeID returns u's global id.
func (u *User) NodeID() NodeID { return NodeID{Kind: NodeUser, User: u.ID} }

// NodeID returns p's global id.
func (p *Post) NodeID() NodeID { return NodeID{Kind: NodePost, Post: p.ID} }

// NodeID returns r's global id.
func (r *Role) NodeID() NodeID { return NodeID{Kind: NodeRole, Role: r.ID} }

// NodeID returns d's global id.
func (d *Department) NodeID() NodeID { return NodeID{Kind: NodeDepartment, Dept: d.ID} }
