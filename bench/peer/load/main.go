// Command load fills the peer of the home-page comparison (scripts/peer.sh:
// PostGraphile over PostgreSQL) with the data set the gateway imports, by
// the same import mapping (package dataset), and writes the k6 users file
// of bench/k6/peer-home.js with a JWT per reader.
//
//	load -db postgres://postgres@127.0.0.1:25432/weibo   COPY users, follows, posts, inbox
//	load -users .data/bench/peer-users.json -secret S [-readers N]   the k6 users file
//	load -check http://127.0.0.1:25480/graphql -users F   each reader's home page as the data set has it
//
// The tables are those of bench/peer/schema.sql, empty; each is streamed as
// CSV into `psql -c '\copy TABLE from stdin'`. The inbox holds exactly the
// gateway's home-timeline entries (dataset.TimelineIndexes of every user):
// both systems serve the same precomputed timelines. Post ids are the
// posts' positions in the data set, from 1.
//
// The readers of the users file are the users who follow someone (of an
// edge-list line "A B" with A != B, user A), shuffled with a fixed seed:
// -readers 0 (the default) writes all of them, -readers N the first N of
// that order (N random ones, the same every run).
package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/seed"
)

func main() {
	defEdges, defPosts, _ := dataset.FullFiles()
	edges := flag.String("edges", defEdges, "edge list of the data set")
	posts := flag.String("posts", defPosts, "posts CSV of the data set")
	db := flag.String("db", "", "PostgreSQL connection string: COPY the tables into it (empty: skip)")
	psql := flag.String("psql", "psql", "the psql binary")
	users := flag.String("users", "", "write the k6 users file here (empty: skip)")
	secret := flag.String("secret", "", "HS256 secret of the readers' JWTs (PostGraphile's --jwt-secret)")
	nreaders := flag.Int("readers", 0, "readers in the users file: this many random users who follow someone; 0, every user who follows someone, in a random order")
	checkURL := flag.String("check", "", "GraphQL endpoint whose home page for each reader of -users must be the data set's (instead of writing -users)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("peer load: ")

	t0 := time.Now()
	ds, err := dataset.Load(*edges, *posts)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("data set: %d users, %d follows, %d posts (%.1f s)", len(ds.Users), len(ds.Follows), len(ds.Posts), time.Since(t0).Seconds())
	if *db != "" {
		if err := load(ds, *psql, *db); err != nil {
			log.Fatal(err)
		}
	}
	if *checkURL != "" {
		if err := check(ds, *checkURL, *users); err != nil {
			log.Fatal(err)
		}
		log.Printf("%s: every reader's home page is the data set's", *checkURL)
		return
	}
	if *users != "" {
		if *nreaders < 0 {
			log.Fatal("-readers: want 0 (every user who follows someone) or a positive number")
		}
		if *secret == "" {
			log.Fatal("-users needs -secret")
		}
		if err := writeUsers(ds, *users, *secret, *nreaders); err != nil {
			log.Fatal(err)
		}
	}
}

// timestamp formats ms since the epoch as a PostgreSQL timestamptz literal.
func timestamp(ms int64) string {
	return time.UnixMilli(ms).In(dataset.Beijing).Format("2006-01-02 15:04:05.000-07")
}

func load(ds *dataset.Dataset, psql, db string) error {
	created := timestamp(seed.Epoch.UnixMilli())
	steps := []struct {
		table string
		rows  func(w *csv.Writer) (int64, error)
	}{
		{"users", func(w *csv.Writer) (int64, error) {
			for _, u := range ds.Users {
				if err := w.Write([]string{strconv.FormatUint(u.ID, 10), u.Username, created}); err != nil {
					return 0, err
				}
			}
			return int64(len(ds.Users)), nil
		}},
		{"follows", func(w *csv.Writer) (int64, error) {
			for _, e := range ds.Follows {
				if err := w.Write([]string{strconv.FormatUint(e.Follower, 10), strconv.FormatUint(e.Followee, 10)}); err != nil {
					return 0, err
				}
			}
			return int64(len(ds.Follows)), nil
		}},
		{"posts", func(w *csv.Writer) (int64, error) {
			for i, p := range ds.Posts {
				if err := w.Write([]string{strconv.Itoa(i + 1), strconv.FormatUint(p.Author, 10), p.Text, timestamp(p.Millis)}); err != nil {
					return 0, err
				}
			}
			return int64(len(ds.Posts)), nil
		}},
		{"inbox", func(w *csv.Writer) (int64, error) {
			at := make([]string, len(ds.Posts))
			for i, p := range ds.Posts {
				at[i] = timestamp(p.Millis)
			}
			var n int64
			for _, u := range ds.Users {
				owner := strconv.FormatUint(u.ID, 10)
				for _, j := range ds.TimelineIndexes(u.ID) {
					if err := w.Write([]string{owner, at[j], strconv.Itoa(int(j) + 1)}); err != nil {
						return 0, err
					}
					n++
				}
			}
			return n, nil
		}},
	}
	for _, s := range steps {
		t0 := time.Now()
		n, err := copyTable(psql, db, s.table, s.rows)
		if err != nil {
			return fmt.Errorf("%s: %w", s.table, err)
		}
		log.Printf("%s: %d rows (%.1f s)", s.table, n, time.Since(t0).Seconds())
		if want := ds.InboxEntries(); s.table == "inbox" && n != want {
			return fmt.Errorf("inbox: %d entries, the gateway's import writes %d", n, want)
		}
	}
	return nil
}

// copyTable streams the CSV rows writes into psql's \copy of table.
func copyTable(psql, db, table string, rows func(*csv.Writer) (int64, error)) (int64, error) {
	cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db,
		"-c", `\copy `+table+` from stdin with (format csv)`)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(in, 1<<20)
	w := csv.NewWriter(bw)
	n, werr := rows(w)
	if werr == nil {
		w.Flush()
		werr = w.Error()
	}
	if werr == nil {
		werr = bw.Flush()
	}
	if cerr := in.Close(); werr == nil {
		werr = cerr
	}
	if err := cmd.Wait(); err != nil {
		return n, fmt.Errorf("psql: %w", err)
	}
	return n, werr
}

// reader is one entry of the users file (bench/k6/lib.js reads readers).
type reader struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Token    string `json:"token"`
}

// pickReaders returns n users who follow someone, in a random order of a
// fixed seed (the same every run); n <= 0 or past their number returns
// every one. The first k of any larger pick are the pick of k.
func pickReaders(ds *dataset.Dataset, n int) []dataset.User {
	var followers []dataset.User
	for _, u := range ds.Users {
		if ds.FollowCount(u.ID) > 0 {
			followers = append(followers, u)
		}
	}
	rng := rand.New(rand.NewPCG(42, 0))
	rng.Shuffle(len(followers), func(i, j int) { followers[i], followers[j] = followers[j], followers[i] })
	if n > 0 && n < len(followers) {
		followers = followers[:n]
	}
	return followers
}

// writeUsers writes {"readers": [...]}: pickReaders(ds, n), each with a
// JWT whose user_id claim PostGraphile hands home_timeline() as
// jwt.claims.user_id.
func writeUsers(ds *dataset.Dataset, path, secret string, n int) error {
	followers := pickReaders(ds, n)
	now := time.Now()
	out := struct {
		Readers []reader `json:"readers"`
	}{}
	for _, u := range followers {
		sid := strconv.FormatUint(u.ID, 10)
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"user_id": sid,
			"aud":     "postgraphile",
			"iat":     now.Unix(),
			"exp":     now.Add(24 * time.Hour).Unix(),
		}).SignedString([]byte(secret))
		if err != nil {
			return err
		}
		out.Readers = append(out.Readers, reader{ID: sid, Username: u.Username, Token: tok})
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(out); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
