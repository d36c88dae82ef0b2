package server_test

import (
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
)

// profile is a user's profile fields as GraphQL returns them.
type profile struct {
	ID          string  `json:"id"`
	DisplayName *string `json:"displayName"`
	Bio         *string `json:"bio"`
}

func (p profile) String() string {
	show := func(s *string) string {
		if s == nil {
			return "null"
		}
		return `"` + *s + `"`
	}
	return p.ID + " " + show(p.DisplayName) + " " + show(p.Bio)
}

const updateProfileMutation = `mutation($d: String, $b: String) { updateProfile(displayName: $d, bio: $b) { id displayName bio } }`

// TestProfile: updateProfile sets, keeps (null or absent) and clears ("")
// the display name and the bio, and every way of reading a user shows the
// result: the mutation's answer, me, user (anonymously too), a post's
// author in post, in the author's posts and in a follower's home timeline.
// Bad text is BAD_USER_INPUT on its argument and changes nothing.
func TestProfile(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			ivy, jon := g.register(uniqueName("ivy")), g.register(uniqueName("jon"))
			g.follow(jon.token, ivy.ID)
			post := g.publish(ivy.token, "a post by ivy")
			g.flush()

			// reads returns ivy's profile as every read shows it; they must agree.
			reads := func(what string) profile {
				t.Helper()
				var d struct {
					Me   profile
					User profile
					Post struct{ Author profile }
				}
				g.ok(ivy.token, `query($id: ID!, $p: ID!) { me { id displayName bio } user(id: $id) { id displayName bio }
					post(id: $p) { author { id displayName bio } } }`, map[string]any{"id": ivy.ID, "p": post.ID}, &d)
				var anon struct{ User profile }
				g.ok("", `query($id: ID!) { user(id: $id) { id displayName bio } }`, map[string]any{"id": ivy.ID}, &anon)
				var tl struct {
					HomeTimeline struct {
						Edges []struct{ Node struct{ Author profile } }
					}
				}
				g.ok(jon.token, `{ homeTimeline(first: 5) { edges { node { author { id displayName bio } } } } }`, nil, &tl)
				var own struct {
					User struct {
						Posts struct {
							Edges []struct{ Node struct{ Author profile } }
						}
					}
				}
				g.ok("", `query($id: ID!) { user(id: $id) { posts(first: 1) { edges { node { author { id displayName bio } } } } } }`,
					map[string]any{"id": ivy.ID}, &own)
				if len(tl.HomeTimeline.Edges) != 1 || len(own.User.Posts.Edges) != 1 {
					t.Fatalf("%s: %d timeline edges and %d posts, want 1 each", what, len(tl.HomeTimeline.Edges), len(own.User.Posts.Edges))
				}
				all := []profile{d.Me, d.User, d.Post.Author, anon.User, tl.HomeTimeline.Edges[0].Node.Author, own.User.Posts.Edges[0].Node.Author}
				for _, p := range all[1:] {
					if p.String() != all[0].String() {
						t.Fatalf("%s: the reads disagree: %v", what, all)
					}
				}
				return all[0]
			}
			update := func(vars map[string]any) profile {
				t.Helper()
				var d struct{ UpdateProfile profile }
				g.ok(ivy.token, updateProfileMutation, vars, &d)
				return d.UpdateProfile
			}
			for _, step := range []struct {
				name string
				vars map[string]any
				want string
			}{
				{"nothing set", nil, ivy.ID + " null null"},
				{"set both", map[string]any{"d": "艾薇 Ivy", "b": "写代码的\nwrites code 🙂"}, ivy.ID + ` "艾薇 Ivy" "写代码的` + "\n" + `writes code 🙂"`},
				{"null keeps, \"\" clears", map[string]any{"d": nil, "b": ""}, ivy.ID + ` "艾薇 Ivy" null`},
				{"absent keeps", map[string]any{"b": "back"}, ivy.ID + ` "艾薇 Ivy" "back"`},
				{"clear the name", map[string]any{"d": ""}, ivy.ID + ` null "back"`},
				{"stored in NFC", map[string]any{"d": "Rene\u0301 👨\u200d👩\u200d👧", "b": "❤\ufe0f"}, ivy.ID + " \"Ren\u00e9 👨\u200d👩\u200d👧\" \"❤\ufe0f\""},
				{"set it again", map[string]any{"d": "Ivy", "b": "back"}, ivy.ID + ` "Ivy" "back"`},
			} {
				if step.vars != nil {
					if got := update(step.vars); got.String() != step.want {
						t.Fatalf("%s: updateProfile answered %v, want %s", step.name, got, step.want)
					}
				}
				if got := reads(step.name); got.String() != step.want {
					t.Fatalf("%s: reads show %v, want %s", step.name, got, step.want)
				}
			}

			for _, c := range []struct {
				name  string
				vars  map[string]any
				field string
				names string // what the message must name, when set
			}{
				{"a name spoofing admin", map[string]any{"d": "admin\u202e\u200b"}, "displayName", "U+202E RIGHT-TO-LEFT OVERRIDE"},
				{"a zero-width space", map[string]any{"d": "ad\u200bmin"}, "displayName", "U+200B ZERO WIDTH SPACE"},
				{"a joiner outside emoji", map[string]any{"d": "ad\u200dmin"}, "displayName", "U+200D ZERO WIDTH JOINER"},
				{"an isolate in the bio", map[string]any{"b": "hello \u2067world\u2069"}, "bio", "U+2067 RIGHT-TO-LEFT ISOLATE"},
				{"a soft hyphen in the bio", map[string]any{"b": "ad\u00admin"}, "bio", "U+00AD SOFT HYPHEN"},
				{"a 31-character name", map[string]any{"d": strings.Repeat("艾", 31), "b": "a valid bio"}, "displayName", ""},
				{"an invisible name", map[string]any{"d": "\u200b\u3164"}, "displayName", ""},
				{"a name on two lines", map[string]any{"d": "Ivy\nWang"}, "displayName", ""},
				{"a 161-character bio", map[string]any{"d": "A valid name", "b": strings.Repeat("b", 161)}, "bio", ""},
				{"a blank bio", map[string]any{"b": " \n\t "}, "bio", ""},
			} {
				e := g.fails(ivy.token, weibo.CodeBadUserInput, updateProfileMutation, c.vars)
				if e.Extensions["field"] != c.field {
					t.Errorf("%s: field %v, want %s", c.name, e.Extensions["field"], c.field)
				}
				if !strings.Contains(e.Message, c.names) {
					t.Errorf("%s: message %q does not name %s", c.name, e.Message, c.names)
				}
			}
			if got := reads("after the refused updates"); got.String() != ivy.ID+` "Ivy" "back"` {
				t.Fatalf("the refused updates changed the profile: %v", got)
			}
		})
	}
}
