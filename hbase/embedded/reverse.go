package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weibohbase/gateway/hbase"
)

// scanReversed is Scan for a reversed scan of the pebble range [lower,
// upper): rows in descending rowkey order. The iterator steps back one row
// at a time — SeekLT to the previous row's last cell, SeekGE to its first —
// and reads each row's cells forward with the same cellWalker as a forward
// scan, so a row reads the same both ways. Like Scan it reopens the
// iterator every scanRefreshRows rows or scanRefreshAge, below the row just
// read.
func (s *Store) scanReversed(ctx context.Context, t *embTable, fams []*embFamily, lower, upper []byte, limit int,
	fn func(*hbase.Result) error) error {
	done := ctx.Done()
	w := cellWalker{t: t, want: fams, maxVersions: 1}
	var (
		b      rowBuilder
		rp     []byte
		rows   int
		opened time.Time
		fresh  int
		it     *pebble.Iterator
		valid  bool
	)
	open := func() error {
		var err error
		it, err = s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return err
		}
		opened, fresh = time.Now(), 0
		valid = it.Last()
		return nil
	}
	if err := open(); err != nil {
		return err
	}
	defer func() {
		if it != nil {
			_ = it.Close()
		}
	}()
	for valid {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		key := it.Key()
		n := embeddedSplit(key)
		if n == len(key) {
			return fmt.Errorf("hbase: embedded store: corrupt cell key %q", key)
		}
		rp = append(rp[:0], key[:n]...)
		b.reset()
		w.now = s.nowMillis()
		if _, err := w.walk(it, it.SeekGE(rp), n, rp, &b); err != nil {
			return err
		}
		fresh++
		if len(b.recs) > 0 {
			row := bytes.Clone(unescape(rp[tableHeaderLen : n-2]))
			if err := fn(b.result(row)); err != nil {
				if errors.Is(err, hbase.ErrStopScan) {
					return nil
				}
				return err
			}
			rows++
			if limit > 0 && rows >= limit {
				return nil
			}
		}
		if fresh >= scanRefreshRows || time.Since(opened) > scanRefreshAge {
			// Reopen below the current row so that the old iterator's view
			// of the store is released.
			if err := it.Close(); err != nil {
				return err
			}
			it = nil
			upper = bytes.Clone(rp)
			if bytes.Compare(lower, upper) >= 0 {
				return nil
			}
			if err := open(); err != nil {
				return err
			}
			continue
		}
		valid = it.SeekLT(rp)
	}
	return it.Error()
}
