package embedded

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Key encoding of the embedded backend; the layout is described in
// embedded.go.

const (
	// tableHeaderLen is the length of a cell key's table prefix
	// (keyspaceData + 4-byte table id).
	tableHeaderLen = 5
	// tsLen is the length of a cell key's timestamp suffix.
	tsLen = 8
)

// segTerm ends each escaped key component.
var segTerm = []byte{0x00, 0x01}

// appendSeg appends b escaped (0x00 -> 0x00 0xff) and terminated (0x00 0x01).
func appendSeg(dst, b []byte) []byte {
	return append(appendEscaped(dst, b), 0x00, 0x01)
}

// appendEscaped appends b with every 0x00 written as 0x00 0xff. A byte
// loop after one growth of dst: rowkeys are short and often hold many 0x00
// bytes (big-endian ids), where a bytes.IndexByte call per escape costs
// more.
func appendEscaped(dst, b []byte) []byte {
	dst = slices.Grow(dst, len(b)+len(b)/4)
	for _, c := range b {
		if c == 0 {
			dst = append(dst, 0, 0xff)
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}

// appendSegString is appendSeg for a string.
func appendSegString(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			dst = append(dst, s...)
			return append(dst, 0x00, 0x01)
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, 0xff)
		s = s[i+1:]
	}
}

// nextSeg splits b after its first component: seg is the escaped component
// (without terminator), rest what follows the terminator. ok is false when b
// holds no terminator.
func nextSeg(b []byte) (seg, rest []byte, ok bool) {
	i := bytes.Index(b, segTerm)
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+2:], true
}

// unescape decodes an escaped component; it returns seg itself when it holds
// no escape (the caller must copy it if it keeps it).
func unescape(seg []byte) []byte {
	if bytes.IndexByte(seg, 0) < 0 {
		return seg
	}
	return appendUnescaped(make([]byte, 0, len(seg)), seg)
}

// appendUnescaped appends the decoded escaped component seg to dst. A
// byte loop: rowkeys are short and often hold many 0x00 bytes (big-endian
// ids), where a bytes.IndexByte call per escape costs more.
func appendUnescaped(dst, seg []byte) []byte {
	for i := 0; i < len(seg); i++ {
		dst = append(dst, seg[i])
		if seg[i] == 0 {
			i++ // skip the 0xff
		}
	}
	return dst
}

// appendRowPrefix appends the encoded prefix of every cell of row in t.
func appendRowPrefix(dst []byte, t *embTable, row []byte) []byte {
	return appendSeg(append(dst, t.prefix...), row)
}

// appendTS appends the key suffix of timestamp ts (ms), newest first.
func appendTS(dst []byte, ts int64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.MaxUint64-uint64(ts))
}

// keyTS decodes the timestamp at the end of a cell key.
func keyTS(key []byte) int64 {
	return int64(math.MaxUint64 - binary.BigEndian.Uint64(key[len(key)-tsLen:]))
}

// segEnd returns the smallest key greater than every key starting with p,
// where p ends with a component terminator (0x00 0x01): p with its last byte
// set to 0x02.
func segEnd(dst, p []byte) []byte {
	dst = append(dst, p...)
	dst[len(dst)-1] = 0x02
	return dst
}

// embeddedSplit is the Comparer's Split: the prefix of a cell key is its
// table id and rowkey (through the rowkey's terminator); any other key is its
// own prefix. Escaped components never hold 0x00 0x01, so the first 0x00
// 0x01 after the table header is the rowkey's terminator.
func embeddedSplit(key []byte) int {
	if len(key) <= tableHeaderLen || key[0] != keyspaceData {
		return len(key)
	}
	i := bytes.Index(key[tableHeaderLen:], segTerm)
	if i < 0 {
		return len(key)
	}
	return tableHeaderLen + i + 2
}

// embeddedComparer orders keys bytewise (as pebble's default comparer does)
// and splits cell keys at the end of the rowkey (see embeddedSplit), which
// gives per-row bloom filters. Its name is recorded in the store: a store
// must always be opened with it.
var embeddedComparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = embeddedSplit
	c.Name = "weibohbase.embedded.v1"
	return &c
}()
