package server

import (
	"strings"
	"testing"
)

func TestOperationNameLabels(t *testing.T) {
	n := &opNames{max: 2}
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"A", "A"},
		{"B", "B"},
		{"A", "A"}, // seen: keeps its label
		{"C", otherLabel},
		{"not a name", otherLabel},
		{"9lives", otherLabel},
		{strings.Repeat("x", MaxLabelLength+1), otherLabel},
	} {
		if got := n.label(c.in); got != c.want {
			t.Errorf("label(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if len(n.seen) != 2 {
		t.Errorf("%d names kept, want 2", len(n.seen))
	}
}

func TestPeekOperation(t *testing.T) {
	for _, c := range []struct{ doc, name, typ string }{
		{`query Timeline { x }`, "Timeline", "query"},
		{"# a comment\n  mutation   Login($u: String!) { x", "Login", "mutation"},
		{`subscription { x }`, "", "subscription"},
		{`{ x }`, "", "query"},
		{`fragment F on User { id } query Q { x }`, "", ""},
		{``, "", ""},
		{`"unterminated`, "", ""},
		{`query`, "", "query"},
	} {
		name, typ := peekOperation(c.doc)
		if name != c.name || typ != c.typ {
			t.Errorf("peekOperation(%q) = %q, %q; want %q, %q", c.doc, name, typ, c.name, c.typ)
		}
	}
}

func TestSaneRequestID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"abc-DEF_1.2", true},
		{strings.Repeat("a", MaxRequestIDLength), true},
		{strings.Repeat("a", MaxRequestIDLength+1), false},
		{"", false},
		{"a b", false},
		{"a\nb", false},
		{"ä", false},
		{"a/b", false},
	} {
		if got := saneRequestID(c.id); got != c.want {
			t.Errorf("saneRequestID(%q) = %v, want %v", c.id, got, c.want)
		}
	}
	if id := newRequestID(); !saneRequestID(id) || len(id) != 24 || id == newRequestID() {
		t.Errorf("newRequestID() = %q", id)
	}
}

func TestCountErrorCodeLabels(t *testing.T) {
	for _, c := range []struct {
		code any
		ok   bool
	}{
		{"BAD_USER_INPUT", true},
		{"", true},
		{"has space", false},
		{strings.Repeat("A", MaxLabelLength+1), false},
		{42, false},
	} {
		if s, isStr := c.code.(string); isStr && validCode(s) != c.ok {
			t.Errorf("validCode(%q) = %v, want %v", s, !c.ok, c.ok)
		}
	}
}
