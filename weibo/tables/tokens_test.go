package tables

import (
	"errors"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

func TestTokenID(t *testing.T) {
	id := TokenID{0xfb, 0xff, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xff}
	s := id.String()
	if len(s) != 22 {
		t.Fatalf("String() = %q, want 22 characters", s)
	}
	if got, err := ParseTokenID(s); err != nil || got != id {
		t.Fatalf("ParseTokenID(%q) = %x, %v", s, got, err)
	}
	for _, bad := range []string{"", s[:21], s + "A", s[:21] + "=", s[:20] + "+/", s[:21] + "_"} {
		if got, err := ParseTokenID(bad); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ParseTokenID(%q) = %x, %v; want ErrInvalidID", bad, got, err)
		}
	}
}

func TestEndedTokenCells(t *testing.T) {
	a, b := TokenID{1}, TokenID{2}
	r := &hbase.Result{Cells: []*hbase.Cell{
		{Family: FamInfo, Qualifier: ColTokenGen, Value: EncodeTokenGeneration(7)},
		{Family: FamEndedTokens, Qualifier: EndedTokenQualifier(a), Value: EncodeMillis(1)},
		{Family: FamEndedTokens, Qualifier: "short", Value: EncodeMillis(1)},
		{Family: FamEndedTokens, Qualifier: EndedTokenQualifier(b), Value: EncodeMillis(1)},
	}}
	if got := EndedTokens(r); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("EndedTokens = %x, want [%x %x]", got, a, b)
	}
	if g := TokenGeneration(r); g != 7 {
		t.Errorf("TokenGeneration = %d, want 7", g)
	}
	if g := TokenGeneration(&hbase.Result{}); g != 0 || EncodeTokenGenerationCheck(0) != nil {
		t.Errorf("an absent generation is %d (check value %x), want 0 (nil)", g, EncodeTokenGenerationCheck(0))
	}
	// The family's TTL, counted from the cell's timestamp, ends at the expiry.
	exp := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	if got := EndedTokenTimestamp(exp) + EndedTokenTTL.Milliseconds(); got != exp {
		t.Errorf("timestamp + TTL = %d, want the expiry %d", got, exp)
	}
}
