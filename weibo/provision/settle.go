package provision

import (
	"context"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The rows derived from a users, department or role row — a login name's
// usernames row, an externalId's index row — are settled after every
// versioned write of it, as package counted settles a relation's
// dependents: the row is written for what the authority holds (claimed
// or written when it holds the name, deleted when not), then the
// authority is read again, and again written and read until the read
// agrees with what was written. Whatever the interleaving of two
// clients' changes, the last write to such a row is then made for the
// authority's final state.

// maxSettles bounds a settle's rounds; each round follows a concurrent
// change, so a settle that runs out leaves its row to the next change or
// to fsck.
const maxSettles = 8

// settleLogin settles the usernames row of name for user uid.
func (s *Service) settleLogin(ctx context.Context, uid weibo.UserID, name string) error {
	holds := func() (bool, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamInfo}})
		if err != nil {
			return false, err
		}
		return strings.EqualFold(text(r, tables.ColLoginName), name) || strings.EqualFold(text(r, tables.ColUsername), name), nil
	}
	return settle(holds, func(want bool) error {
		if want {
			_, err := s.Accounts.ClaimLoginName(ctx, name, uid)
			return err
		}
		return s.Accounts.ReleaseLoginName(ctx, name, uid)
	})
}

// settleIndex settles the index row of externalId ext of object id of
// kind ('u', 'd', 'r'), whose row is table's row.
func (s *Service) settleIndex(ctx context.Context, kind byte, ext string, id uint64, table string, row []byte) error {
	if ext == "" {
		return nil
	}
	holds := func() (bool, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: table, Row: row, Families: []string{tables.FamInfo}})
		if err != nil {
			return false, err
		}
		if kind == 'u' && !liveUser(r) {
			return false, nil
		}
		return text(r, tables.ColExternalID) == ext, nil
	}
	return settle(holds, func(want bool) error {
		if want {
			return s.putIndex(ctx, kind, ext, id, s.w.NowMillis())
		}
		return s.deleteIndex(ctx, kind, ext, id)
	})
}

// settle writes for holds' answer, then reads it again, until they agree.
func settle(holds func() (bool, error), write func(want bool) error) error {
	want, err := holds()
	for range maxSettles {
		if err != nil {
			return err
		}
		if err := write(want); err != nil {
			return err
		}
		now, err := holds()
		if err != nil || now == want {
			return err
		}
		want = now
	}
	return nil
}
