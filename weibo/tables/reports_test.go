package tables_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/weibo/tables"
)

// TestReportLayout checks the rowkeys of weibo:reports against the hex
// example of docs/schema.md, their decoders, and the report's id.
func TestReportLayout(t *testing.T) {
	id := tables.NewReportID(1583037356789, 0x2a)
	if id != 1659934979432382506 || id.Millis() != 1583037356789 || id.String() != "report:1659934979432382506" {
		t.Fatalf("id %d (%s), ms %d", uint64(id), id, id.Millis())
	}
	hexOf := func(b []byte) string { return hex.EncodeToString(b) }
	for _, c := range []struct{ got, want string }{
		{hexOf(tables.ReportKey(id)), "72e8f6b9ee50afffd5"},
		{hexOf(tables.ReportStatusKey(tables.ReportOpen, id)), "736fe8f6b9ee50afffd5"},
		{hexOf(tables.ReportReporterKey(22732, id)), "7500000000000058cce8f6b9ee50afffd5"},
		{hexOf(tables.ReportCountsKey), "63"},
		{hexOf(tables.EncodeReportState(tables.ReportState{Status: tables.ReportOpen, Version: 1})), "6f0000000000000001"},
		{hexOf([]byte(tables.ReportPostQualifier(1583037296789))), "500000017094603095"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	if got, ok := tables.DecodeReportKey(tables.ReportKey(id)); !ok || got != id {
		t.Errorf("DecodeReportKey: %d %v", got, ok)
	}
	if st, got, ok := tables.DecodeReportStatusKey(tables.ReportStatusKey(tables.ReportResolved, id)); !ok || got != id || st != tables.ReportResolved {
		t.Errorf("DecodeReportStatusKey: %c %d %v", st, got, ok)
	}
	if uid, got, ok := tables.DecodeReportReporterKey(tables.ReportReporterKey(7, id)); !ok || got != id || uid != 7 {
		t.Errorf("DecodeReportReporterKey: %d %d %v", uid, got, ok)
	}
	post := tables.PostID{Author: 3, Millis: 99}
	if isPost, p, ms, ok := tables.DecodeReportItemQualifier(tables.ReportCommentQualifier(post, 1234)); !ok || isPost || p != post || ms != 1234 {
		t.Errorf("comment qualifier: %v %v %d %v", isPost, p, ms, ok)
	}
	n, err := tables.ParseNodeID(id.String())
	if err != nil || n.Kind != tables.NodeReport || n.Report != id || n.String() != id.String() {
		t.Errorf("ParseNodeID(%s): %+v %v", id, n, err)
	}
	for _, bad := range []string{"report:", "report:0", "report:01", "report:x", "reports:1"} {
		if _, err := tables.ParseReportID(bad); err == nil {
			t.Errorf("ParseReportID(%q) accepted", bad)
		}
	}
	// The earlier a report, the later its rows: newest first.
	older := tables.NewReportID(1583037356788, 0xfffff)
	if strings.Compare(string(tables.ReportKey(older)), string(tables.ReportKey(id))) <= 0 {
		t.Error("an older report's row sorts before a newer one's")
	}
}
