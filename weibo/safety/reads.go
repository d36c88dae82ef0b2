package safety

import (
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// RowScan is the scan of uid's safety row alone (at most one row): a read
// path whose store call is a scan adds it to that call (hbase.ScanMany,
// paging.Query.With), as one that makes a GetMany adds RowGet.
func RowScan(uid weibo.UserID) *hbase.Scan {
	return &hbase.Scan{Table: tables.Safety, Prefix: tables.SafetyKey(uid), Limit: 1}
}

// FromRows decodes owner's Set from the rows of RowScan(owner) (none: no
// blocks, mutes or filters) at now (ms).
func FromRows(owner weibo.UserID, rows []*hbase.Result, now int64) *Set {
	if len(rows) == 0 {
		return FromRow(owner, nil, now)
	}
	return FromRow(owner, rows[0], now)
}
