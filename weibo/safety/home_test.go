package safety

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestStableRunes checks the table of runes folding leaves alone against
// Fold, rune by rune, over the BMP.
func TestStableRunes(t *testing.T) {
	n := 0
	for r := rune(0x80); r <= 0xFFFF; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		s := string(r)
		if st := stable(r); st != (Fold(s) == s) {
			t.Fatalf("stable(%U) = %v but Fold(%q) = %q", r, st, s, Fold(s))
		}
		if stable(r) {
			n++
		}
	}
	if n < 50000 {
		t.Fatalf("only %d stable runes", n)
	}
}

// TestFold compares HomeView.fold with Fold on texts mixing ASCII,
// Chinese, fullwidth forms and runes that fold (ß, Σ, Ａ, İ, ﬁ), and its
// byte pairs with those of Fold's result.
func TestFold(t *testing.T) {
	parts := []string{"Wuhan ", "stay strong", "武汉加油", "，", "！", "#新冠肺炎#", "ＡＢ", "ａｂ", "１２",
		"ß", "Σ", "ς", "İ", "ﬁ", "Straße", "😷", "ＣＯＶＩＤ", "covid-19", "COVID", "\xff", " ", "·", "①", "℃", "é", "É",
		"\ue627", "𐐀", "\xe6\x97", "\xed\xa0\x80", "K"}
	rng := rand.New(rand.NewPCG(1, 2))
	v := &HomeView{grams: true}
	for range 5000 {
		var s string
		for range rng.IntN(8) {
			s += parts[rng.IntN(len(parts))]
		}
		var have, want [4096 / 64]uint64
		got := v.fold(s, &have)
		f := Fold(s)
		for j := 0; j+1 < len(f); j++ {
			h := gram(f[j], f[j+1])
			want[h>>6] |= 1 << (h & 63)
		}
		if got != f || have != want {
			t.Fatalf("fold(%q) = %q (pairs equal: %v), Fold = %q", s, got, have == want, f)
		}
	}
	for _, s := range []string{"武汉加油 wuhan", "武汉加油 WUHAN"} {
		var have [4096 / 64]uint64
		if n := testing.AllocsPerRun(100, func() { _ = v.fold(s, &have) }); n != 0 {
			t.Fatalf("fold(%q) allocates %v times", s, n)
		}
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
	millis := int64(0)
	post := func(a weibo.UserID) weibo.PostID { // a new post each time: verdicts are remembered by post
		millis++
		return weibo.PostID{Author: a, Millis: millis}
	}
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
		hide, warn := s.HomeView().Home(c.id, c.root, c.text)
		if hide != c.hide || !slices.Equal(warn, c.warn) {
			t.Errorf("%s: Home = %v, %v; want %v, %v", c.name, hide, warn, c.hide, c.warn)
		}
		if h, w := (*Set)(nil).HomeView().Home(c.id, c.root, c.text); h || w != nil {
			t.Errorf("%s: a nil Set hides %v, warns %v", c.name, h, w)
		}
	}
}

// TestHomeViewAgreesWithMatch checks HomeView.Home, with enough filters to
// use its byte-pair test, against Set.Match on random texts.
func TestHomeViewAgreesWithMatch(t *testing.T) {
	phrases := []string{"疫情", "武汉", "lockdown", "Covid", "加油", "stay", "ß", "口罩", "a", "新冠肺炎"}
	var fs []tables.FilterEntry
	for i, p := range phrases {
		fs = append(fs, tables.FilterEntry{ID: uint64(i + 1), Action: byte([]Action{Warn, Hide, Warn}[i%3]),
			Contexts: byte(ContextHome), Phrase: p, WholeWord: i%2 == 0})
	}
	r := &hbase.Result{Row: tables.SafetyKey(1), Cells: []*hbase.Cell{
		{Family: tables.FamSafetySet, Qualifier: tables.ColFilters, Value: tables.EncodeFilters(fs)}}}
	s := FromRow(1, r, 1)
	v := s.HomeView()
	if !v.grams {
		t.Fatal("the view does not use byte pairs")
	}
	parts := []string{"今天", "疫情", "武汉", "加油", " ", "LOCKDOWN", "lockdowns", "COVID-19", "Stay", "strasse", "口", "罩",
		"新冠", "肺炎", "a", "b", "，", "ss"}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		var text string
		for range rng.IntN(10) {
			text += parts[rng.IntN(len(parts))]
		}
		id := weibo.PostID{Author: 2, Millis: int64(i)} // a post per text: verdicts are remembered by post
		hide, warn := v.Home(id, nil, text)
		mHide, mWarn := s.Match(text, ContextHome)
		if hide != mHide || !hide && !slices.Equal(warn, mWarn) {
			t.Fatalf("%q: Home = %v, %v; Match = %v, %v", text, hide, warn, mHide, mWarn)
		}
	}
}
