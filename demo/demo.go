// Package demo embeds the demo subset of the project's real data set (see
// README.md in this directory): the first 50,128 lines of the Higgs Twitter
// edge list and the Weibo posts of 2020-03-01 and 2020-03-02, in the same
// formats as the full files, so that the same import mapping (package
// dataset) applies. Load gives 20,088 users, 50,122 follows, 21,673 posts and
// 271,307 home-timeline (inbox) entries.
package demo

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"

	"github.com/weibohbase/gateway/dataset"
)

// File names of the subset, in this directory and in FS.
const (
	EdgesFile = "higgs_social_network_prefix50128.edgelist.gz"
	PostsFile = "weibo_covid19_posts_2020-03-01_to_2020-03-02.csv.gz"
)

// FS holds EdgesFile and PostsFile (gzipped, as on disk).
//
//go:embed higgs_social_network_prefix50128.edgelist.gz weibo_covid19_posts_2020-03-01_to_2020-03-02.csv.gz
var FS embed.FS

// Load reads the embedded subset and joins it with the import mapping
// (dataset.Read). It fails only if the embedded files are corrupt.
func Load() (*dataset.Dataset, error) {
	edges, err := open(EdgesFile)
	if err != nil {
		return nil, err
	}
	defer edges.Close()
	posts, err := open(PostsFile)
	if err != nil {
		return nil, err
	}
	defer posts.Close()
	return dataset.Read(edges, posts)
}

func open(name string) (io.ReadCloser, error) {
	f, err := FS.Open(name)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("demo %s: %w", name, err)
	}
	return zr, nil
}
