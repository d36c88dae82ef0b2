package weibo

// Topic is one topic (#话题#) and its kept post count.
type Topic struct {
	// Name is the topic's name (package weibo/topic/hashtag: 1 to 64
	// code points).
	Name string
	// PostCount is how many stored posts have the topic (the topic row's
	// kept counter); meaningful when Counted.
	PostCount int64
	// Counted tells that PostCount was read; a topic built from a post's
	// text (Post.topics) has not read it.
	Counted bool
}

// ID returns the topic's global id, "topic:<name>".
func (t *Topic) ID() string { return t.NodeID().String() }

// NodeID returns the topic's global id.
func (t *Topic) NodeID() NodeID { return NodeID{Kind: NodeTopic, Topic: t.Name} }
