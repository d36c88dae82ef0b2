// Package mediamodel is the GraphQL layer's view of a stored picture: the
// fields of the schema's Media, filled by the resolvers from the media
// store.
package mediamodel

import "github.com/weibohbase/gateway/weibo"

// Media is a picture as the schema's Media shows it: its id, alt text,
// blurhash, and the size, media type and bytes of its LARGE variant.
type Media struct {
	// ID is the GraphQL id, "media:<n>".
	ID string
	// Owner is the user who uploaded it.
	Owner weibo.UserID
	// Alt is the alt text; nil when none.
	Alt *string
	// Width and Height are LARGE's in pixels.
	Width, Height int
	// Blurhash is the picture's BlurHash.
	Blurhash string
	// MIMEType is LARGE's media type.
	MIMEType string
	// Bytes is LARGE's size in bytes.
	Bytes int64
}

// NodeID implements weibo.Node: the picture's global id, ID parsed
// (node(id:) fetches it again).
func (m *Media) NodeID() weibo.NodeID {
	n, _ := weibo.ParseNodeID(m.ID)
	return n
}
