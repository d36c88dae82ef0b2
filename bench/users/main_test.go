package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
)

// TestRun writes the users file of a small imported data set through a
// real gateway and checks its shape (that of bench/k6/lib.js) and that
// each token is its user's.
func TestRun(t *testing.T) {
	ds, err := dataset.Read(strings.NewReader("1 2\n1 3\n2 3\n3 1\n4 3\n5 3\n"),
		strings.NewReader("date,userid,text\n2020-03-01,9,hello\n2020-03-01,9,again\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithDataset(ds))
	dir := t.TempDir()
	files := map[string]string{"readers.txt": "1 4\n2 5\n\n4 1\n", "authors.txt": "3\n1\n", "fans.txt": "1\n2\n4\n5\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "users.json")
	t.Setenv("GATEWAY_JWT_SECRET", gatewaytest.Secret)
	if err := run(g.URL, filepath.Join(dir, "readers.txt"), filepath.Join(dir, "authors.txt"), filepath.Join(dir, "fans.txt"), "3", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The shape, with the tokens blanked.
	var file struct {
		Readers []map[string]string `json:"readers"`
		Authors []json.Number       `json:"authors"`
		Author  map[string]string   `json:"author"`
		Fans    []map[string]string `json:"fans"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var toks []string
	check := func(u map[string]string) {
		toks = append(toks, u["token"])
		if u["token"] == "" {
			t.Errorf("%v: no token", u)
		}
		u["token"] = "T"
	}
	for _, r := range file.Readers {
		check(r)
	}
	check(file.Author)
	for _, f := range file.Fans {
		check(f)
	}
	got, _ := json.Marshal(file)
	want := `{"readers":[{"id":"1","target":"4","token":"T","username":"u1"},{"id":"2","target":"5","token":"T","username":"u2"},{"id":"4","target":"1","token":"T","username":"u4"}],` +
		`"authors":[3,1],"author":{"id":"3","token":"T","username":"u3"},` +
		`"fans":[{"id":"1","token":"T","username":"u1"},{"id":"2","token":"T","username":"u2"},{"id":"4","token":"T","username":"u4"},{"id":"5","token":"T","username":"u5"}]}`
	if string(got) != want {
		t.Fatalf("users file\n got %s\nwant %s", got, want)
	}
	ids := []string{"1", "2", "4", "3", "1", "2", "4", "5"}
	for i, tok := range toks {
		var d struct {
			Me *struct{ ID, Username string }
		}
		g.OK(tok, `{ me { id username } }`, nil, &d)
		if d.Me == nil || d.Me.ID != ids[i] || d.Me.Username != "u"+ids[i] {
			t.Errorf("token %d: me is %+v, want u%s", i, d.Me, ids[i])
		}
	}

	// A user the gateway does not know: an error, and the file stays.
	if err := os.WriteFile(filepath.Join(dir, "fans.txt"), []byte("1\n77\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(g.URL, filepath.Join(dir, "readers.txt"), filepath.Join(dir, "authors.txt"), filepath.Join(dir, "fans.txt"), "3", out); err == nil {
		t.Fatal("an unknown fan: no error")
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(after, b) {
		t.Error("a failed run changed the users file")
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s.tmp: %v", out, err)
	}
}
