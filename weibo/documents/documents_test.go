package documents_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/documents"
	"github.com/weibohbase/gateway/weibo/tables"
)

const (
	home = "query Home { me { username } }"
	// homeID is `printf %s "$home" | sha256sum`, written out on purpose.
	homeID = "sha256:4a81c9dfd409593dcc689eaf1fd1c2121d12f3aa51457ce9afc1828fca4cf1ec"
	login  = "mutation Login($u: String!, $p: String!) { login(username: $u, password: $p) { token } }"
)

// TestStore adds, reads and lists documents on both backends: a document
// is written once (its first source and time stay), a wrong id writes
// nothing.
func TestStore(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.OpenOwn(t, tables.Namespace, "documents")
			ctx := t.Context()
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			at := time.UnixMilli(1795000000000)
			svc := documents.New(st, func() time.Time { return at })
			if documents.IDOf(home) != homeID {
				t.Fatalf("IDOf(home) = %s, want %s", documents.IDOf(home), homeID)
			}
			n, err := svc.Add(ctx, "app.json", []documents.Document{
				{ID: homeID, Text: home, Names: []string{"Home"}},
				{ID: documents.IDOf(login), Text: login, Names: []string{"Login"}},
			})
			if err != nil || n != 2 {
				t.Fatalf("Add = %d, %v", n, err)
			}
			at = at.Add(time.Hour)
			if n, err := svc.Add(ctx, "other.json", []documents.Document{{ID: homeID, Text: home, Names: []string{"Home"}}}); err != nil || n != 0 {
				t.Fatalf("Add again = %d, %v", n, err)
			}
			bad := []documents.Document{{ID: documents.IDOf("query A { me { id } }"), Text: "query A { me { id } }"}, {ID: homeID, Text: login}}
			if _, err := svc.Add(ctx, "bad.json", bad); weibo.CodeOf(err) != weibo.CodeBadUserInput {
				t.Fatalf("Add of a wrong id: %v", err)
			}
			for _, id := range []string{homeID, strings.TrimPrefix(homeID, "sha256:"), strings.ToUpper(strings.TrimPrefix(homeID, "sha256:"))} {
				d, err := svc.Get(ctx, id)
				if err != nil || d == nil {
					t.Fatalf("Get(%s) = %v, %v", id, d, err)
				}
				if d.ID != homeID || d.Text != home || d.Source != "app.json" || !d.Added.Equal(time.UnixMilli(1795000000000)) || strings.Join(d.Names, ",") != "Home" {
					t.Errorf("Get(%s) = %+v", id, d)
				}
			}
			for _, id := range []string{documents.IDOf("query A { me { id } }"), "sha256:zz", "", "md5:4a81"} {
				if d, err := svc.Get(ctx, id); err != nil || d != nil {
					t.Errorf("Get(%q) = %+v, %v; want none", id, d, err)
				}
			}
			list, err := svc.List(ctx)
			if err != nil || len(list) != 2 {
				t.Fatalf("List = %d documents, %v", len(list), err)
			}
			for _, d := range list {
				if d.ID != documents.IDOf(d.Text) || d.Source != "app.json" {
					t.Errorf("listed %+v", d)
				}
			}
		})
	}
}

// TestParseManifest reads both manifest formats and refuses what is not
// one, or ids that are not the SHA-256 of their text.
func TestParseManifest(t *testing.T) {
	apollo, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1, "operations": []map[string]string{
		{"id": strings.TrimPrefix(homeID, "sha256:"), "name": "Home", "type": "query", "body": home},
		{"id": strings.TrimPrefix(documents.IDOf(login), "sha256:"), "name": "Login", "type": "mutation", "body": login},
	}})
	docs, err := documents.ParseManifest(apollo)
	if err != nil || len(docs) != 2 || docs[0].ID != homeID || docs[0].Text != home || docs[1].Text != login {
		t.Fatalf("Apollo manifest: %+v, %v", docs, err)
	}
	relay, _ := json.Marshal(map[string]string{strings.TrimPrefix(documents.IDOf(login), "sha256:"): login, homeID: home})
	docs, err = documents.ParseManifest(relay)
	if err != nil || len(docs) != 2 {
		t.Fatalf("Relay output: %+v, %v", docs, err)
	}
	for _, d := range docs {
		if d.ID != documents.IDOf(d.Text) {
			t.Errorf("Relay document %+v", d)
		}
	}
	for _, c := range []struct{ name, in, want string }{
		{"md5 ids", `{"0123456789abcdef0123456789abcdef": "query Home { me { username } }"}`, "not the SHA-256"},
		{"other format", `{"format": "apollo-persisted-query-manifest", "version": 2, "operations": []}`, "version 2"},
		{"not an object", `["query { me { id } }"]`, "must be a JSON object"},
		{"not JSON", `{"a": `, "not valid JSON"},
		{"empty", `{}`, "no documents"},
		{"text not a string", `{"` + strings.TrimPrefix(homeID, "sha256:") + `": 1}`, "JSON string"},
		{"empty body", `{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [{"id": "x", "name": "A", "type": "query", "body": " "}]}`, "empty"},
	} {
		if _, err := documents.ParseManifest([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
