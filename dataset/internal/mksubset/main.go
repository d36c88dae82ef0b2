// Command mksubset cuts the demo subset (demo/*.gz) out of the full data set,
// reproducibly:
//
//	go run ./dataset/internal/mksubset                  # writes demo/, prints counts
//	go run ./dataset/internal/mksubset -src DIR -out DIR -edges 50000 -days 2020-03-01,2020-03-02
//
// The edge list subset is the first -edges lines of the full edge list,
// extended to the end of the last source's block so that every follower in
// it keeps its complete follow list; its bytes are exactly a prefix of the
// (decompressed) original. The posts subset is the header and every record
// whose date is one of -days, copied byte for byte. Both are gzipped with
// compress/gzip at best compression and an empty header (no name, no mtime),
// so the output depends only on the inputs and Go's deflate. It then loads
// the subset with dataset.Load and prints the counts and sha256s that
// demo/README.md quotes.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weibohbase/gateway/dataset"
)

func main() {
	log.SetFlags(0)
	src := flag.String("src", "", "directory of the full data set (default $GATEWAY_DATASETS or ../shared/datasets)")
	out := flag.String("out", "", "output directory (default <module root>/demo)")
	minEdges := flag.Int("edges", 50000, "minimum number of edge-list lines (extended to the end of the last source's block)")
	days := flag.String("days", "2020-03-01,2020-03-02", "comma-separated dates of the posts to keep")
	flag.Parse()

	edgesPath, postsPath := filepath.Join(*src, dataset.EdgesFile), filepath.Join(*src, dataset.PostsFile)
	if *src == "" {
		var ok bool
		if edgesPath, postsPath, ok = dataset.FullFiles(); !ok {
			log.Fatalf("full data set not found; pass -src or set %s", dataset.EnvDatasets)
		}
	}
	if *out == "" {
		root := dataset.ModuleRoot()
		if root == "" {
			log.Fatal("no go.mod above the working directory; pass -out")
		}
		*out = filepath.Join(root, "demo")
	}
	keep := map[string]bool{}
	for _, d := range strings.Split(*days, ",") {
		if _, err := dataset.DayStart(d); err != nil {
			log.Fatal(err)
		}
		keep[d] = true
	}
	dates := make([]string, 0, len(keep))
	for d := range keep {
		dates = append(dates, d)
	}
	slices.Sort(dates)

	// Edge list: a prefix ending at a source block boundary.
	edges := readAll(edgesPath)
	var cut, lines int
	var lastSrc []byte
	for cut < len(edges) {
		nl := bytes.IndexByte(edges[cut:], '\n')
		if nl < 0 {
			log.Fatalf("%s: unterminated last line", edgesPath)
		}
		line := edges[cut : cut+nl]
		src := line[:max(bytes.IndexByte(line, ' '), 0)]
		if lines >= *minEdges && !bytes.Equal(src, lastSrc) {
			break
		}
		lastSrc = src
		cut += nl + 1
		lines++
	}
	edgesOut := edges[:cut]

	// Posts: the header and the records of the kept dates, byte for byte.
	posts := readAll(postsPath)
	head := bytes.IndexByte(posts, '\n') + 1
	postsOut := bytes.Clone(posts[:head])
	rows := 0
	err := dataset.ReadPosts(bytes.NewReader(posts), func(r dataset.Row) error {
		if keep[r.Date] {
			postsOut = append(postsOut, posts[r.Offset:r.End]...)
			rows++
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	edgesName := fmt.Sprintf("higgs_social_network_prefix%d.edgelist.gz", lines)
	postsName := fmt.Sprintf("weibo_covid19_posts_%s.csv.gz", dates[0])
	if len(dates) > 1 {
		postsName = fmt.Sprintf("weibo_covid19_posts_%s_to_%s.csv.gz", dates[0], dates[len(dates)-1])
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	ePath, pPath := filepath.Join(*out, edgesName), filepath.Join(*out, postsName)
	writeGzip(ePath, edgesOut)
	writeGzip(pPath, postsOut)

	ds, err := dataset.Load(ePath, pPath)
	if err != nil {
		log.Fatal(err)
	}
	var tl30, tl100, tlMax int
	for _, u := range ds.Users {
		n := len(ds.TimelineIndexes(u.ID))
		tlMax = max(tlMax, n)
		if n >= 30 {
			tl30++
		}
		if n >= 100 {
			tl100++
		}
	}
	sources := 0
	for _, u := range ds.Users {
		if ds.FollowCount(u.ID) > 0 {
			sources++
		}
	}
	fmt.Printf("edges: %s: %d lines (%d bytes), %d sources, %d users, %d follows, %d self-loops\n",
		edgesName, lines, len(edgesOut), sources, len(ds.Users), len(ds.Follows), ds.SelfLoops)
	fmt.Printf("posts: %s: %d rows (%d bytes) of %s, %d blank, %d authors, %d dropped, %d posts\n",
		postsName, rows, len(postsOut), strings.Join(dates, ","), ds.BlankRows, ds.Authors, ds.DroppedRows, len(ds.Posts))
	fmt.Printf("inbox entries (sum of fans+1 over posts): %d\n", ds.InboxEntries())
	fmt.Printf("home timelines: %d users with >= 30 posts, %d with >= 100, longest %d\n", tl30, tl100, tlMax)
	for _, f := range []struct {
		path string
		raw  []byte
	}{{ePath, edgesOut}, {pPath, postsOut}} {
		gz := readFile(f.path)
		fmt.Printf("%s  %s  (%d bytes gzip)\n", sum(gz), filepath.Base(f.path), len(gz))
		fmt.Printf("%s  %s  (%d bytes unpacked)\n", sum(f.raw), strings.TrimSuffix(filepath.Base(f.path), ".gz"), len(f.raw))
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func readFile(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	return b
}

func readAll(path string) []byte {
	f, err := dataset.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	return b
}

func writeGzip(path string, data []byte) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
