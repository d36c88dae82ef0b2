package pushws

import "testing"

// TestFrameBytes: a message's bytes on the wire, frame headers included,
// as RFC 6455 sizes them (2 bytes up to 125 of payload, 4 up to 65535,
// 10 beyond), cut into frames of at most max.
func TestFrameBytes(t *testing.T) {
	for _, tc := range []struct {
		n, max int
		want   int64
	}{
		{0, 32 << 10, 2},
		{125, 32 << 10, 127},
		{126, 32 << 10, 130},
		{32 << 10, 32 << 10, 32<<10 + 4},
		{65535, 1 << 20, 65539},
		{65536, 1 << 20, 65546},
		{65536, 32 << 10, 2 * (32<<10 + 4)},
		{70000, 32 << 10, 2*(32<<10+4) + 70000 - 64<<10 + 4},
		{32<<10 + 100, 32 << 10, 32<<10 + 4 + 102},
	} {
		if got := frameBytes(tc.n, tc.max); got != tc.want {
			t.Errorf("frameBytes(%d, %d) = %d, want %d", tc.n, tc.max, got, tc.want)
		}
	}
}
