// Command bench-users writes the k6 users file of `make bench`
// (scripts/bench.sh builds it to bin/bench-users; bench/k6/lib.js reads
// the file) from the users scripts/bench.sh picks, with a bearer token
// for each, minted with the gateway's secret (bench/internal/tokens), not
// obtained by logging in: thousands of logins would cost a bcrypt hash
// each.
//
//	bench-users -url http://127.0.0.1:18480 -readers R -authors A -fans F -author ID -out users.json
//
// Inputs, one user a line, ids as in the edge list (user n is "u<n>"):
// -readers "id target" lines (a reader, and a user it does not follow),
// -authors ids, -fans ids; -author is the most-followed user's id. The
// secret is GATEWAY_JWT_SECRET, the one the gateway serves with. The file
// written (through a temporary file, renamed) is
//
//	{"readers":[{"id","username","token","target"}...],"authors":[ids...],
//	 "author":{"id","username","token"},"fans":[{"id","username","token"}...]}
//
// with ids as strings except in authors (numbers). A user the gateway does
// not know fails the command, and nothing is written.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/weibohbase/gateway/bench/internal/tokens"
	"github.com/weibohbase/gateway/weibo"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:18480", "the gateway's base URL")
	readers := flag.String("readers", "", `the readers: "id target" lines`)
	authors := flag.String("authors", "", "the authors: one id a line")
	fans := flag.String("fans", "", "the author's fans: one id a line")
	author := flag.String("author", "", "the most-followed user's id")
	out := flag.String("out", "", "the users file to write")
	flag.Parse()
	if err := run(*url, *readers, *authors, *fans, *author, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench-users:", err)
		os.Exit(1)
	}
}

func run(url, readersPath, authorsPath, fansPath, author, out string) error {
	if readersPath == "" || authorsPath == "" || fansPath == "" || author == "" || out == "" {
		return errors.New("-readers, -authors, -fans, -author and -out are needed")
	}
	secret := os.Getenv("GATEWAY_JWT_SECRET")
	if secret == "" {
		return errors.New("GATEWAY_JWT_SECRET is unset: tokens are minted with the gateway's secret")
	}
	var in picked
	var err error
	if in.readers, err = readLines(readersPath, 2); err != nil {
		return err
	}
	if in.authors, err = readLines(authorsPath, 1); err != nil {
		return err
	}
	if in.fans, err = readLines(fansPath, 1); err != nil {
		return err
	}
	if in.author, err = weibo.ParseUserID(author); err != nil {
		return fmt.Errorf("-author: %w", err)
	}
	t := time.Now()
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = write(context.Background(), w, url, []byte(secret), in)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench-users: %d readers, %d authors, %d fans: %d tokens in %v\n",
		len(in.readers), len(in.authors), len(in.fans), len(in.readers)+1+len(in.fans), time.Since(t).Round(time.Millisecond))
	return nil
}

// picked is what scripts/bench.sh picked: each reader with its follow
// target, the authors, the most-followed author and its fans.
type picked struct {
	readers [][]weibo.UserID // {reader, target}
	authors [][]weibo.UserID // {author}
	fans    [][]weibo.UserID // {fan}
	author  weibo.UserID
}

// readLines reads path's non-blank lines of n user ids each.
func readLines(path string, n int) ([][]weibo.UserID, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]weibo.UserID
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != n {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", path, line, len(fields), n)
		}
		ids := make([]weibo.UserID, n)
		for i, s := range fields {
			if ids[i], err = weibo.ParseUserID(s); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
		out = append(out, ids)
	}
	return out, sc.Err()
}

// user is a user of the users file with its token.
type user struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Token    string `json:"token"`
}

// reader is a reader of the users file: a user and its follow target.
type reader struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Token    string `json:"token"`
	Target   string `json:"target"`
}

// usersFile is the users file bench/k6/lib.js reads.
type usersFile struct {
	Readers []reader `json:"readers"`
	Authors []uint64 `json:"authors"`
	Author  user     `json:"author"`
	Fans    []user   `json:"fans"`
}

// write mints the tokens of in's readers, author and fans through the
// gateway at base and writes the users file to w.
func write(ctx context.Context, w io.Writer, base string, secret []byte, in picked) error {
	ids := make([]weibo.UserID, 0, len(in.readers)+1+len(in.fans))
	for _, r := range in.readers {
		ids = append(ids, r[0])
	}
	ids = append(ids, in.author)
	for _, f := range in.fans {
		ids = append(ids, f[0])
	}
	toks, err := tokens.Mint(ctx, base, secret, ids)
	if err != nil {
		return err
	}
	mk := func(id weibo.UserID, tok string) user {
		return user{ID: id.String(), Username: "u" + id.String(), Token: tok}
	}
	file := usersFile{Readers: []reader{}, Authors: []uint64{}, Fans: []user{}}
	for i, r := range in.readers {
		u := mk(r[0], toks[i])
		file.Readers = append(file.Readers, reader{ID: u.ID, Username: u.Username, Token: u.Token, Target: r[1].String()})
	}
	for _, a := range in.authors {
		file.Authors = append(file.Authors, uint64(a[0]))
	}
	file.Author = mk(in.author, toks[len(in.readers)])
	for i, f := range in.fans {
		file.Fans = append(file.Fans, mk(f[0], toks[len(in.readers)+1+i]))
	}
	return json.NewEncoder(w).Encode(file)
}
