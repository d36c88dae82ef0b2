package dataset

import (
	"os"
	"path/filepath"
)

// File names of the full data set in /work/shared/datasets (see its
// README.md). The demo subset (package demo) has files of the same formats.
const (
	EdgesFile = "higgs_social_network_prefix355k.edgelist.gz"
	PostsFile = "weibo_covid19_posts_2020-03-01_to_2020-03-20.csv.gz"
)

// EnvDatasets is the environment variable that names the directory holding
// the full data set (EdgesFile and PostsFile).
const EnvDatasets = "GATEWAY_DATASETS"

// ModuleRoot returns the nearest directory at or above the working directory
// that holds a go.mod, or "" when there is none. Tests and tools use it to
// find the shared data sets.
func ModuleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// FullFiles returns the paths of the full data set's two files: in
// $GATEWAY_DATASETS when set, else in ../shared/datasets relative to
// ModuleRoot. ok is false when either file is missing.
func FullFiles() (edges, posts string, ok bool) {
	dir := os.Getenv(EnvDatasets)
	if dir == "" {
		root := ModuleRoot()
		if root == "" {
			return "", "", false
		}
		dir = filepath.Join(root, "..", "shared", "datasets")
	}
	edges, posts = filepath.Join(dir, EdgesFile), filepath.Join(dir, PostsFile)
	return edges, posts, isFile(edges) && isFile(posts)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
