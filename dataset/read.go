// Package dataset reads the project's two real data files (a prefix of the
// SNAP Higgs Twitter follow graph and 20 days of COVID-19 Sina Weibo posts,
// see /work/shared/datasets/README.md and demo/README.md) and joins them with
// the project's import mapping (the "Import mapping" section of that README):
//
//  1. every node id n of the edge list (either column) is a user with id n
//     and username "u<n>";
//  2. each line "A B" with A != B means A follows B; self-loops are ignored;
//  3. post authors ranked by post count (non-blank rows only) descending, then
//     weibo userid ascending, are matched to graph users ranked by fan count
//     descending, then node id ascending; rows of authors ranked at or past
//     the number of graph users are dropped;
//  4. a row on date D that is the k-th of the N_D rows of that date (file
//     order, every row counted) was written at D 00:00:00 +08:00 +
//     floor(k*86400/N_D) seconds;
//  5. a post's content is its text exactly as the CSV parser returns it.
//
// The readers stream (ReadEdges, ReadPosts); Load and Read build the joined,
// in-memory Dataset an importer (seed.Import) and tests use. The package does
// not depend on the storage layer.
package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Edge is one line "A B" of the edge list: Follower (A) follows Followee (B).
type Edge struct {
	// Follower is the node id in the first column.
	Follower uint64
	// Followee is the node id in the second column.
	Followee uint64
}

// Row is one record of the posts CSV (header "date,userid,text").
type Row struct {
	// Date is the date column as written, "YYYY-MM-DD" (a day in +08:00).
	Date string
	// UserID is the pseudonymized Weibo userid (not a graph node id).
	UserID uint64
	// Text is the text field exactly as encoding/csv returns it; it may be
	// empty, contain newlines, or start/end with white space.
	Text string
	// Offset is the byte offset of the record's first byte in the
	// (decompressed) CSV stream; End is the offset just past its line end.
	// Together they let a tool copy the exact bytes of a range of records.
	Offset, End int64
}

// postsHeader is the required first record of the posts CSV.
var postsHeader = []string{"date", "userid", "text"}

// Open opens path for reading and transparently decompresses it when it is
// gzip (detected by its magic bytes, not its name). Closing the returned
// reader closes the file.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &readCloser{Reader: zr, close: func() error {
			zerr := zr.Close()
			if err := f.Close(); err != nil {
				return err
			}
			return zerr
		}}, nil
	}
	return &readCloser{Reader: br, close: f.Close}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r *readCloser) Close() error { return r.close() }

// ReadEdges streams an edge list: one edge "A B" per line (two unsigned
// decimal integers separated by one space, "\n" line endings, no header; a
// trailing "\r" and a missing final newline are tolerated, blank lines are
// not). It calls fn for every line, self-loops and duplicates included, in
// file order, and stops at the first error fn returns. A malformed line gives
// an error naming its line number.
func ReadEdges(r io.Reader, fn func(Edge) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSuffix(sc.Bytes(), []byte{'\r'})
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 {
			return fmt.Errorf("edge list line %d: want \"A B\", got %q", line, b)
		}
		a, err1 := parseUint(b[:sp])
		c, err2 := parseUint(b[sp+1:])
		if err1 != nil || err2 != nil {
			return fmt.Errorf("edge list line %d: want \"A B\", got %q", line, b)
		}
		if err := fn(Edge{Follower: a, Followee: c}); err != nil {
			return err
		}
	}
	return sc.Err()
}

// parseUint parses a non-empty run of ASCII digits (no sign, no spaces).
func parseUint(b []byte) (uint64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, strconv.ErrSyntax
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseUint(string(b), 10, 64)
}

// ReadPosts streams the posts CSV: a header "date,userid,text", then one
// record per post, RFC 4180 quoting (texts may hold quoted newlines). It
// calls fn for every record in file order, blank texts included, and stops at
// the first error fn returns. A wrong header, a record without exactly three
// fields or a userid that is not an unsigned decimal integer is an error
// naming the record's line. Dates are not validated here (Read does).
func ReadPosts(r io.Reader, fn func(Row) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 3
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("posts csv: empty input, want header date,userid,text")
		}
		return fmt.Errorf("posts csv: %w", err)
	}
	if len(head) != 3 || head[0] != postsHeader[0] || head[1] != postsHeader[1] || head[2] != postsHeader[2] {
		return fmt.Errorf("posts csv: header %q, want %q", head, postsHeader)
	}
	for {
		start := cr.InputOffset()
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("posts csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		uid, err := parseUint([]byte(rec[1]))
		if err != nil {
			return fmt.Errorf("posts csv line %d: userid %q is not an unsigned integer", line, rec[1])
		}
		row := Row{Date: rec[0], UserID: uid, Text: rec[2], Offset: start, End: cr.InputOffset()}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// ReadEdgesFile is ReadEdges on the (possibly gzipped) file at path.
func ReadEdgesFile(path string, fn func(Edge) error) error {
	f, err := Open(path)
	if err != nil {
		return err
	}
	err = ReadEdges(f, fn)
	cerr := f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return cerr
}

// ReadPostsFile is ReadPosts on the (possibly gzipped) file at path.
func ReadPostsFile(path string, fn func(Row) error) error {
	f, err := Open(path)
	if err != nil {
		return err
	}
	err = ReadPosts(f, fn)
	cerr := f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return cerr
}
