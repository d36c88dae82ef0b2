package counted

import (
	"context"
	"errors"
)

// SettleRounds bounds the write-and-re-read rounds of one settle. The
// authority flipping this often means other writes are settling it too;
// the caller then keeps its marker and the repairer settles it later.
const SettleRounds = 8

// ErrUnsettled is the error of a settle whose authority kept changing.
var ErrUnsettled = errors.New("the pair kept changing while it was settled")

// Settle makes step 5 of a counted write: it writes the dependents for
// state, the authority's state as the caller knows it, reads the
// authority again, and repeats until the read agrees with what was
// written (equal), at most SettleRounds times. It returns the state it
// settled on, and ErrUnsettled when the authority kept changing. write
// must be idempotent (Puts and Deletes).
func Settle[S any](ctx context.Context, state S, equal func(a, b S) bool,
	write func(ctx context.Context, state S) error, read func(ctx context.Context) (S, error)) (S, error) {
	for range SettleRounds {
		if err := write(ctx, state); err != nil {
			return state, err
		}
		now, err := read(ctx)
		if err != nil {
			return state, err
		}
		if equal(now, state) {
			return state, nil
		}
		state = now
	}
	return state, ErrUnsettled
}
