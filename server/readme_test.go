package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
)

// readmeBlock is one ```graphql block of README.md: its text as pasted,
// the user it names on a "# as <username>" first line ("" for none) and
// the line it starts on.
type readmeBlock struct {
	text, user string
	line       int
}

// readmeOp is one operation of a README block: the block, the operation,
// its place in the block's text ([start, end), up to the next operation)
// and in README.md (line), and the error code its comment announces ("" for
// none).
type readmeOp struct {
	block      readmeBlock
	op         *ast.OperationDefinition
	start, end int
	line       int
	want       string
}

// readmeOps returns the operations of the ```graphql blocks of markdown, in
// order; an error for a block that does not parse or end, an anonymous
// operation, or a name used twice (operation names are what the test finds
// earlier results by).
func readmeOps(markdown string) ([]readmeOp, error) {
	var ops []readmeOp
	names := map[string]int{}
	for _, b := range readmeBlocks(markdown) {
		if b.line < 0 {
			return nil, fmt.Errorf("README.md:%d: a ```graphql block that does not end", -b.line)
		}
		doc, err := parser.ParseQuery(&ast.Source{Name: "README.md", Input: b.text})
		if err != nil {
			return nil, fmt.Errorf("README.md:%d: %v", b.line, err)
		}
		for i, op := range doc.Operations {
			line := b.line + op.Position.Line // b.line is the fence's
			if op.Name == "" {
				return nil, fmt.Errorf("README.md:%d: an anonymous operation", line)
			}
			if at, dup := names[op.Name]; dup {
				return nil, fmt.Errorf("README.md:%d: operation %s is named at line %d too", line, op.Name, at)
			}
			names[op.Name] = line
			o := readmeOp{block: b, op: op, start: op.Position.Start, end: len(b.text), line: line}
			if i+1 < len(doc.Operations) {
				o.end = doc.Operations[i+1].Position.Start
			}
			if m := readmeExpected.FindStringSubmatch(b.text[o.start:o.end]); m != nil {
				o.want = m[1]
			}
			ops = append(ops, o)
		}
	}
	return ops, nil
}

// readmeBlocks returns the ```graphql blocks of markdown; a block that does
// not end comes last, with its line negated.
func readmeBlocks(markdown string) []readmeBlock {
	var blocks []readmeBlock
	var cur *readmeBlock
	for i, line := range strings.Split(markdown, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```graphql":
			cur = &readmeBlock{line: i + 1}
		case cur != nil && strings.HasPrefix(line, "```"):
			if first, _, _ := strings.Cut(cur.text, "\n"); strings.HasPrefix(first, "# as ") {
				cur.user = strings.TrimSpace(strings.TrimPrefix(first, "# as "))
			}
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if cur != nil {
		cur.line = -cur.line
		blocks = append(blocks, *cur)
	}
	return blocks
}

// readmeExpected are the error codes a README operation may announce in a
// comment on its line ("# BAD_USER_INPUT, reason ..."): the operation must
// then fail with that code.
var readmeExpected = regexp.MustCompile(`#\s*(BAD_USER_INPUT|FORBIDDEN|NOT_FOUND|UNAUTHENTICATED)\b`)

// readmePlaceholder is a "<...>" the README asks the reader to replace with
// a value returned earlier.
var readmePlaceholder = regexp.MustCompile(`"<[^"<>]+>"`)

// readmeSession runs README operations in order as a reader would: it keeps
// each user's token and password as the operations change them, and every
// operation's data by its name.
type readmeSession struct {
	t         *testing.T
	g         *gw
	tokens    map[string]string
	passwords map[string]string
	data      map[string]any // operation name → its decoded data
}

// token returns a token of user, logging in when the session holds none.
func (s *readmeSession) token(user string) string {
	s.t.Helper()
	if user == "" {
		return ""
	}
	if s.tokens[user] == "" {
		pw := s.passwords[user]
		if pw == "" {
			pw = seed.DefaultPassword
		}
		s.tokens[user] = s.g.in(s.t).login(user, pw)
	}
	return s.tokens[user]
}

// value returns the string at path (dot-separated keys and list indexes) in
// the data of the earlier operation op.
func (s *readmeSession) value(op, path string) string {
	s.t.Helper()
	v, ok := s.data[op]
	if !ok {
		s.t.Fatalf("a placeholder needs the result of %s, which has not run", op)
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				s.t.Fatalf("%s: no %s in %v", op, path, x)
			}
			v = x[i]
		default:
			s.t.Fatalf("%s: no %s (at %q: %v)", op, path, k, v)
		}
	}
	str, ok := v.(string)
	if !ok || str == "" {
		s.t.Fatalf("%s: %s is %v, not a string", op, path, v)
	}
	return str
}

// userID returns the id of the user named username, found in the data of
// the earlier operation op listing users.
func (s *readmeSession) userID(op, username string) string {
	s.t.Helper()
	for i := 0; ; i++ {
		p := "users.edges." + strconv.Itoa(i) + ".node."
		if s.value(op, p+"username") == username {
			return s.value(op, p+"id")
		}
	}
}

// fill replaces the placeholders of text (one operation's) with the values
// of earlier operations, as the README's prose tells the reader; user is
// the block's.
func (s *readmeSession) fill(text, user string) string {
	s.t.Helper()
	fills := map[string]func() string{
		"<an id from the page>": func() string { return s.value("HomePage", "homeTimeline.edges.0.node.id") },
		"<the original's id>":   func() string { return s.value("Repost", "repost.repostOf.id") },
		"<the post's id>":       func() string { return s.value("Publish", "publishPost.id") },
		"<a post id>":           func() string { return s.value("HomePage", "homeTimeline.edges.0.node.id") },
		"<a comment id>":        func() string { return s.value("Comment", "addComment.id") },
		"<a notification id>":   func() string { return s.value("Notifications", "notifications.edges.0.node.id") },
		"<a filter id>":         func() string { return s.value("CreateFilter", "createFilter.id") },
		"<xiaohong's id>":       func() string { return s.value("AdminOverview", "xiaohong.id") },
		"<班长's id>":             func() string { return s.value("CreateRole", "createRole.id") },
		"<xiaoming's id>":       func() string { return s.userID("UsersByPrefix", seed.DemoXiaoming) },
		"<moderators' id>":      func() string { return s.value("CreateModerators", "createRole.id") },
		"<the report's id>":     func() string { return s.value("Report", "reportContent.id") },
		"<the media id>":        func() string { return s.upload(user) },
	}
	return readmePlaceholder.ReplaceAllStringFunc(text, func(q string) string {
		f, ok := fills[q[1:len(q)-1]]
		if !ok {
			s.t.Fatalf("the test does not know what to put for %s", q)
		}
		return strconv.Quote(f())
	})
}

// upload uploads a picture as user, as the README's curl example does, and
// returns its media id.
func (s *readmeSession) upload(user string) string {
	s.t.Helper()
	up := s.g.in(s.t).upload(s.token(user), []byte("\xff\xd8\xff\xe0 a cat"), nil)
	if up.status != http.StatusOK || len(up.Errors) > 0 || up.Data.UploadMedia == nil {
		s.t.Fatalf("upload: HTTP %d %+v", up.status, up.Errors)
	}
	return up.Data.UploadMedia.ID
}

// run runs the operation op of the block (whose text is doc, its
// placeholders filled) as user; want is the error code the README
// announces for it, "" for none.
func (s *readmeSession) run(doc string, op *ast.OperationDefinition, user, want string) {
	s.t.Helper()
	if op.Operation == ast.Subscription {
		s.subscribe(doc, op.Name, user)
		return
	}
	r := s.g.in(s.t).raw(http.MethodPost, s.token(user), mustJSON(map[string]any{"query": doc, "operationName": op.Name}))
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []gqlError     `json:"errors"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		s.t.Fatalf("%s: HTTP %d %s", op.Name, r.status, r.body)
	}
	if want != "" {
		if len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != want {
			s.t.Fatalf("%s: want %s, got HTTP %d %s", op.Name, want, r.status, r.body)
		}
		return
	}
	if len(out.Errors) > 0 || r.status != http.StatusOK {
		s.t.Fatalf("%s as %q: HTTP %d %s", op.Name, user, r.status, r.body)
	}
	s.data[op.Name] = out.Data
	s.t.Logf("%s as %q: %.200s", op.Name, user, r.body)
	for _, f := range op.SelectionSet {
		field, ok := f.(*ast.Field)
		if !ok {
			continue
		}
		arg := func(name string) string {
			if a := field.Arguments.ForName(name); a != nil {
				return a.Value.Raw
			}
			return ""
		}
		switch field.Name {
		case "login", "register":
			s.passwords[arg("username")] = arg("password")
			s.tokens[arg("username")] = s.value(op.Name, field.Alias+".token")
		case "changePassword":
			s.passwords[user] = arg("newPassword")
			s.tokens[user] = s.value(op.Name, field.Alias+".token")
		case "logout", "logoutEverywhere":
			delete(s.tokens, user)
		}
	}
}

// subscribe starts the subscription op of doc as user over
// graphql-transport-ws and waits for its first event, causing events until
// one comes: posts by user for the home timeline, mentions of user by u2
// for notifications.
func (s *readmeSession) subscribe(doc, op, user string) {
	s.t.Helper()
	g := s.g.in(s.t)
	conn, _, err := g.wsDial(http.Header{})
	if err != nil {
		s.t.Fatalf("%s: dial: %v", op, err)
	}
	defer conn.Close()
	init := map[string]any{}
	if user != "" {
		init["Authorization"] = "Bearer " + s.token(user)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": init}); err != nil {
		s.t.Fatal(err)
	}
	if m := g.read(conn); m.Type != "connection_ack" {
		s.t.Fatalf("%s: want connection_ack, got %+v", op, m)
	}
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": doc, "operationName": op}}); err != nil {
		s.t.Fatal(err)
	}
	got := make(chan wsMessage, 1)
	go func() {
		for {
			var m wsMessage
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			if err := conn.ReadJSON(&m); err != nil {
				got <- wsMessage{Type: "read error", Payload: json.RawMessage(strconv.Quote(err.Error()))}
				return
			}
			switch m.Type {
			case "ping":
				_ = conn.WriteJSON(map[string]any{"type": "pong"})
			case "ka", "pong":
			default:
				got <- m
				return
			}
		}
	}()
	for i := 0; ; i++ {
		if op == "NotificationAdded" {
			g.publish(s.token("u2"), fmt.Sprintf("@%s 你好 %d", user, i))
		} else {
			g.publish(s.token(user), fmt.Sprintf("ping %d", i))
		}
		select {
		case m := <-got:
			var p struct {
				Errors []gqlError `json:"errors"`
			}
			if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil || len(p.Errors) > 0 {
				s.t.Fatalf("%s as %q: %s %s", op, user, m.Type, m.Payload)
			}
			s.t.Logf("%s as %q: %.200s", op, user, m.Payload)
			return
		case <-time.After(300 * time.Millisecond):
			if i > 100 {
				s.t.Fatalf("%s: no event", op)
			}
		}
	}
}

// TestReadmeBlocksRun runs every ```graphql block of README.md against the
// demo data, loaded as `make run` loads it, in the README's order, each
// operation by its name (as GraphiQL runs the one picked) and as the user
// the block names, with the placeholders filled from earlier results. Every
// operation is named; each must succeed, or fail with the code its line's
// comment announces.
func TestReadmeBlocksRun(t *testing.T) {
	st := testenv.Embedded(t)
	g, _ := seededGatewayWith(t, st, func(c *server.Config) { c.Media = newStandInMedia(c.Svc.Feed) })
	ctx := t.Context()
	if err := seed.OrgDemo(ctx, g.svc); err != nil {
		t.Fatal(err)
	}
	if err := seed.LikesDemo(ctx, g.svc, seed.DemoLikesViewer, seed.DemoLikers); err != nil {
		t.Fatal(err)
	}
	if err := seed.RepostDemo(ctx, g.svc); err != nil {
		t.Fatal(err)
	}
	if err := seed.CommentDemo(ctx, g.svc, seed.DemoCommentViewer); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := readmeOps(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) < 50 {
		t.Fatalf("%d operations in README.md's graphql blocks", len(ops))
	}
	s := &readmeSession{t: t, g: g, tokens: map[string]string{}, passwords: map[string]string{}, data: map[string]any{}}
	for _, o := range ops {
		ok := t.Run(fmt.Sprintf("%d_%s", o.line, o.op.Name), func(t *testing.T) {
			s.t = t
			b := o.block
			doc := b.text[:o.start] + s.fill(b.text[o.start:o.end], b.user) + b.text[o.end:]
			s.run(doc, o.op, b.user, o.want)
		})
		if !ok {
			return
		}
	}
}

// TestReadmeOps: what TestReadmeBlocksRun refuses before running anything
// (a block of several anonymous operations, as GraphiQL refuses it; one
// anonymous operation; a name used twice; a block that does not end) and
// what it reads (the user, the announced error code, the lines).
func TestReadmeOps(t *testing.T) {
	for _, c := range []struct{ name, md, err string }{
		{"anonymous operations", "text\n```graphql\nmutation { logout }\n{ me { id } }\n```\n", "README.md:3: an anonymous operation"},
		{"one anonymous", "```graphql\n# as u1\n{ me { id } }\n```\n", "README.md:3: an anonymous operation"},
		{"a name twice", "```graphql\nquery A { me { id } }\n```\n\n```graphql\nquery A { me { id } }\n```\n", "README.md:6: operation A is named at line 2 too"},
		{"no end", "```graphql\nquery A { me { id } }\n", "README.md:1: a ```graphql block that does not end"},
		{"not GraphQL", "```graphql\nquery A { me { id }\n```\n", "README.md:2:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := readmeOps(c.md); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
	ops, err := readmeOps("# t\n\n```graphql\n# as admin\nmutation A { a }   # BAD_USER_INPUT, reason X\nquery B { b }   # needs MANAGE_USERS\n```\n\n```sh\n{ x }\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range ops {
		got = append(got, fmt.Sprintf("%d %s as %q want %q", o.line, o.op.Name, o.block.user, o.want))
	}
	if want := []string{`5 A as "admin" want "BAD_USER_INPUT"`, `6 B as "admin" want ""`}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("ops %q, want %q", got, want)
	}
}
