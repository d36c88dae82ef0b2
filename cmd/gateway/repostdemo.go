package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// seedRepostDemo makes the demo's reposts (seed.RepostDemo) once per store
// — the marker row tables.RepostDemoMarkerKey says they were made — after
// the demo data set is imported. Their fan-outs are left in the outbox for
// the serving domain's first sweep.
func seedRepostDemo(ctx context.Context, log *slog.Logger, st hbase.Store) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.RepostDemoMarkerKey})
	if err != nil || r.Exists() {
		return err
	}
	if err := seed.RepostDemo(ctx, domain.New(st, domain.WithLogger(log))); err != nil {
		return err
	}
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.RepostDemoMarkerKey, Values: hbase.Values{
		tables.FamInfo: {tables.ColCreated: tables.EncodeMillis(time.Now().UnixMilli())}}}); err != nil {
		return err
	}
	log.Info("demo reposts made", "login_as", "u1")
	return nil
}
