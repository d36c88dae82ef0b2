package feed

import (
	"slices"
	"strings"
	"testing"
)

// TestMentionedNames checks which '@' start a mention, without a store.
func TestMentionedNames(t *testing.T) {
	long := strings.Repeat("a", 32)
	for _, c := range []struct {
		text string
		want []string
	}{
		{"@alice", []string{"alice"}},
		{"hi @Alice and @ALICE", []string{"alice"}},
		{"@bob @alice @bob", []string{"bob", "alice"}},
		{"(@alice), @bob.", []string{"alice", "bob"}},
		{"你好@alice的朋友，@bob：", []string{"alice", "bob"}},
		{"alice@example.com", nil},
		{"a.b@alice x+y@bob x-y@carol", nil},
		{"@@alice", []string{"alice"}},
		{"@alice@bob", []string{"alice"}},
		{"＠alice", nil},
		{"@ alice", nil},
		{"@", nil},
		{"@" + long, []string{long}},
		{"@" + long + "a", nil},
		{"@u1 @a_b_9", []string{"u1", "a_b_9"}},
	} {
		if got := MentionedNames(c.text); !slices.Equal(got, c.want) {
			t.Errorf("MentionedNames(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	var many []string
	for i := range MaxMentions + 5 {
		many = append(many, "@user"+strings.Repeat("x", i))
	}
	if got := MentionedNames(strings.Join(many, " ")); len(got) != MaxMentions {
		t.Errorf("%d names, want at most %d", len(got), MaxMentions)
	}
}
