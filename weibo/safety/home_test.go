package safety

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCaselessRunes checks every rune caseless admits against Fold: each
// folds to itself.
func TestCaselessRunes(t *testing.T) {
	n := 0
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if !caseless(r) {
			continue
		}
		n++
		if s := string(r); Fold(s) != s {
			t.Fatalf("caseless(%U) but Fold(%q) = %q", r, s, Fold(s))
		}
	}
	if n < 20000 {
		t.Fatalf("only %d caseless runes", n)
	}
}

// TestFoldFast compares foldFast with Fold on texts mixing ASCII, Chinese,
// fullwidth forms and runes that fold (ß, Σ, Ａ, İ, ﬁ).
func TestFoldFast(t *testing.T) {
	parts := []string{"Wuhan ", "stay strong", "武汉加油", "，", "！", "#新冠肺炎#", "ＡＢ", "ａｂ", "１２",
		"ß", "Σ", "ς", "İ", "ﬁ", "Straße", "😷", "ＣＯＶＩＤ", "covid-19", "COVID", "\xff", " "}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var s string
		for range rng.IntN(8) {
			s += parts[rng.IntN(len(parts))]
		}
		if got, want := foldFast(s), Fold(s); got != want {
			t.Fatalf("foldFast(%q) = %q, Fold = %q", s, got, want)
		}
	}
	if s := "武汉加油 wuhan"; testing.AllocsPerRun(100, func() { _ = foldFast(s) }) != 0 {
		t.Fatal("foldFast allocates for a text that folds to itself")
	}
}

// TestHome checks Set.Home: authors and reposted roots blocked either
// way or muted are hidden, expired mutes and filters are not, HIDE
// filters hide, WARN ones are listed, filters of other contexts do
// nothing, and a nil Set hides nothing.
func TestHome(t *testing.T) {
	const viewer, blocked, blocker, muted, expired, friend = 1, 2, 3, 4, 5, 6
	now := int64(1_000_000)
	var b tables.Blocks
	b = b.With(tables.BlockEntry{UID: blocked, At: 1})
	var m tables.Mutes
	m = m.Put(tables.MuteEntry{UID: muted, At: 1}, now)
	m = m.Put(tables.MuteEntry{UID: expired, At: 1, Expires: now}, 1)
	fs := tables.EncodeFilters([]tables.FilterEntry{
		{ID: 1, Action: byte(Hide), Contexts: byte(ContextHome), Phrase: "疫情"},
		{ID: 2, Action: byte(Warn), Contexts: byte(ContextHome) | byte(ContextTopic), Phrase: "Lockdown", WholeWord: true},
		{ID: 3, Action: byte(Hide), Contexts: byte(ContextNotifications), Phrase: "hello"},
		{ID: 4, Action: byte(Hide), Contexts: byte(ContextHome), Phrase: "gone", Expires: now},
	})
	r := &hbase.Result{Row: tables.SafetyKey(viewer), Cells: []*hbase.Cell{
		&hbase.Cell{Family: tables.FamSafetyBlockedBy, Qualifier: tables.BlockedByQualifier(blocker), Value: []byte{}},
		&hbase.Cell{Family: tables.FamSafetySet, Qualifier: tables.ColBlocks, Value: b},
		&hbase.Cell{Family: tables.FamSafetySet, Qualifier: tables.ColFilters, Value: fs},
		&hbase.Cell{Family: tables.FamSafetySet, Qualifier: tables.ColMutes, Value: m},
	}}
	s := FromRow(viewer, r, now)
	post := func(a weibo.UserID) weibo.PostID { return weibo.PostID{Author: a, Millis: 7} }
	root := func(a weibo.UserID) *weibo.PostID { p := post(a); return &p }
	for _, c := range []struct {
		name string
		id   weibo.PostID
		root *weibo.PostID
		text string
		hide bool
		warn []FilterResult
	}{
		{"friend", post(friend), nil, "hello world", false, nil},
		{"blocked author", post(blocked), nil, "hi", true, nil},
		{"author who blocks", post(blocker), nil, "hi", true, nil},
		{"muted author", post(muted), nil, "hi", true, nil},
		{"mute expired", post(expired), nil, "hi", false, nil},
		{"repost of the blocked", post(friend), root(blocked), "look", true, nil},
		{"repost of the blocker", post(friend), root(blocker), "look", true, nil},
		{"repost of the muted", post(friend), root(muted), "look", true, nil},
		{"repost of a friend", post(viewer), root(friend), "look", false, nil},
		{"hide filter", post(friend), nil, "今天的疫情数据", true, nil},
		{"warn filter folded", post(friend), nil, "the LOCKDOWN ends", false, []FilterResult{{Phrase: "Lockdown", Action: Warn}}},
		{"warn filter whole word", post(friend), nil, "lockdowns", false, nil},
		{"expired filter", post(friend), nil, "gone", false, nil},
	} {
		hide, warn := s.Home(c.id, c.root, c.text)
		if hide != c.hide || !slices.Equal(warn, c.warn) {
			t.Errorf("%s: Home = %v, %v; want %v, %v", c.name, hide, warn, c.hide, c.warn)
		}
		if h, w := (*Set)(nil).Home(c.id, c.root, c.text); h || w != nil {
			t.Errorf("%s: a nil Set hides %v, warns %v", c.name, h, w)
		}
	}
}
