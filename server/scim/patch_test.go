package scim

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/elimity-com/scim"
	scimerr "github.com/elimity-com/scim/errors"
	"github.com/elimity-com/scim/schema"
	"github.com/scim2/filter-parser/v2"

	"github.com/weibohbase/gateway/weibo/provision"
)

// op builds a PATCH operation as the library hands it over.
func op(t *testing.T, name, path string, value any) scim.PatchOperation {
	t.Helper()
	o := scim.PatchOperation{Op: name, Value: value}
	if path != "" {
		p, err := filter.ParsePath([]byte(path))
		if err != nil {
			t.Fatalf("path %q: %v", path, err)
		}
		o.Path = &p
	}
	return o
}

// decode is a JSON value as the library types it.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPatchUser(t *testing.T) {
	p := patcher{main: userSchema(), exts: []schema.Schema{enterpriseSchema()}}
	base := `{"userName":"bjensen@example.com","active":true,"displayName":"Babs",
		"name":{"givenName":"Barbara","familyName":"Jensen"},
		"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984"}}`
	cases := []struct {
		name string
		ops  func(t *testing.T) []scim.PatchOperation
		want string // the attributes after, or "" when err
		err  string // scimType or status of the error
	}{
		{
			name: "replace active (Entra: op Replace)",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "Replace", "active", false)}
			},
			want: `{"userName":"bjensen@example.com","active":false,"displayName":"Babs",
				"name":{"givenName":"Barbara","familyName":"Jensen"},
				"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984"}}`,
		},
		{
			name: "no path: a map of attributes (Okta)",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "replace", "", map[string]any{"active": false, "name.familyName": "Smith", "displayName": "B. Smith"})}
			},
			want: `{"userName":"bjensen@example.com","active":false,"displayName":"B. Smith",
				"name":{"givenName":"Barbara","familyName":"Smith"},
				"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984"}}`,
		},
		{
			name: "value filter path: emails[type eq work].value",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "replace", `emails[type eq "work"].value`, "barbara@example.com")}
			},
			want: `{"userName":"bjensen@example.com","active":true,"displayName":"Babs",
				"name":{"givenName":"Barbara","familyName":"Jensen"},
				"emails":[{"value":"barbara@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984"}}`,
		},
		{
			name: "value filter path with no match adds the value (Entra)",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "Add", `emails[type eq "other"].value`, "b@other.org")}
			},
			want: `{"userName":"bjensen@example.com","active":true,"displayName":"Babs",
				"name":{"givenName":"Barbara","familyName":"Jensen"},
				"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"},{"type":"other","value":"b@other.org"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984"}}`,
		},
		{
			name: "remove by value filter",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "remove", `emails[type eq "home"]`, nil)}
			},
			want: `{"userName":"bjensen@example.com","active":true,"displayName":"Babs",
				"name":{"givenName":"Barbara","familyName":"Jensen"},
				"emails":[{"value":"bjensen@example.com","type":"work","primary":true}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984"}}`,
		},
		{
			name: "extension attribute by its full path; remove a sub-attribute",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{
					op(t, "replace", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "Tour Operations"),
					op(t, "remove", "name.givenName", nil),
					op(t, "add", "emails", []any{map[string]any{"value": "x@y.org"}}),
				}
			},
			want: `{"userName":"bjensen@example.com","active":true,"displayName":"Babs",
				"name":{"familyName":"Jensen"},
				"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"},{"value":"x@y.org"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984","department":"Tour Operations"}}`,
		},
		{
			name: "no path with the extension's container",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "add", "", map[string]any{
					"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": map[string]any{"employeeNumber": "1", "costCenter": "4130"},
				})}
			},
			want: `{"userName":"bjensen@example.com","active":true,"displayName":"Babs",
				"name":{"givenName":"Barbara","familyName":"Jensen"},
				"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"1","costCenter":"4130"}}`,
		},
		{
			name: "replace a multi-valued attribute whole; remove displayName",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{
					op(t, "replace", "emails", []any{map[string]any{"value": "only@example.com", "type": "work"}}),
					op(t, "remove", "displayName", nil),
				}
			},
			want: `{"userName":"bjensen@example.com","active":true,
				"name":{"givenName":"Barbara","familyName":"Jensen"},
				"emails":[{"value":"only@example.com","type":"work"}],
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984"}}`,
		},
		{
			name: "read-only groups",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "add", "groups", []any{map[string]any{"value": "role:1"}})}
			},
			err: "mutability",
		},
		{
			name: "remove without a path",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "remove", "", nil)}
			},
			err: "noTarget",
		},
		{
			name: "an unknown op",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "move", "displayName", "x")}
			},
			err: "invalidValue",
		},
		{
			name: "a value filter that is not equalities and matches nothing",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "replace", `emails[value co "nothing"].type`, "work")}
			},
			err: "noTarget",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			attrs := decode(t, base)
			err := p.applyAll(attrs, c.ops(t))
			if c.err != "" {
				se, ok := err.(scimerr.ScimError)
				if !ok || string(se.ScimType) != c.err {
					t.Fatalf("err = %#v, want scimType %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			got, _ := json.Marshal(attrs)
			if want := decode(t, c.want); !reflect.DeepEqual(decode(t, string(got)), want) {
				t.Errorf("got  %s\nwant %s", got, mustJSON(want))
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestGroupChange(t *testing.T) {
	grp := groupOf(t)
	cases := []struct {
		name string
		ops  func(t *testing.T) []scim.PatchOperation
		want string // the change as JSON
		err  string
	}{
		{
			name: "Entra: Add members",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "Add", "members", []any{map[string]any{"value": "12"}, map[string]any{"value": "13"}})}
			},
			want: `{"Add":[12,13]}`,
		},
		{
			name: "Entra: Remove members with a value",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "Remove", "members", []any{map[string]any{"value": "12"}})}
			},
			want: `{"Remove":[12]}`,
		},
		{
			name: "Okta: remove members[value eq]",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "remove", `members[value eq "14"]`, nil)}
			},
			want: `{"Remove":[14]}`,
		},
		{
			name: "Okta: replace displayName without a path (id dropped by the library)",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "replace", "", map[string]any{"displayName": "Tour Guides"})}
			},
			want: `{"DisplayName":"Tour Guides"}`,
		},
		{
			name: "remove all, then add: add wins for the one added",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{
					op(t, "remove", "members", nil),
					op(t, "add", "members", []any{map[string]any{"value": "5"}}),
				}
			},
			want: `{"Add":[5],"RemoveAll":true}`,
		},
		{
			name: "add then remove the same member",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{
					op(t, "add", "members", []any{map[string]any{"value": "5"}, map[string]any{"value": "6"}}),
					op(t, "remove", `members[value eq "5"]`, nil),
				}
			},
			want: `{"Add":[6],"Remove":[5]}`,
		},
		{
			name: "priority and externalId",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{
					op(t, "replace", GatewayGroupSchema+":priority", int64(40)),
					op(t, "replace", "externalId", "ext-9"),
				}
			},
			want: `{"ExternalID":"ext-9","Priority":40}`,
		},
		{
			name: "kind is immutable",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "replace", GatewayGroupSchema+":kind", "department")}
			},
			err: "mutability",
		},
		{
			name: "a member that is no user id",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "add", "members", []any{map[string]any{"value": "abc"}})}
			},
			err: "invalidValue",
		},
		{
			name: "priority out of range",
			ops: func(t *testing.T) []scim.PatchOperation {
				return []scim.PatchOperation{op(t, "replace", GatewayGroupSchema+":priority", int64(1001))}
			},
			err: "invalidValue",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := groupChange(groupSchema(), grp, c.ops(t))
			if c.err != "" {
				se, ok := err.(scimerr.ScimError)
				if !ok || string(se.ScimType) != c.err {
					t.Fatalf("err = %#v, want scimType %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("groupChange: %v", err)
			}
			got, _ := json.Marshal(changeJSON(ch))
			if !reflect.DeepEqual(decode(t, string(got)), decode(t, c.want)) {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// groupOf is a role group as the domain reads it.
func groupOf(t *testing.T) *provision.Group {
	t.Helper()
	return &provision.Group{ID: "role:3", Kind: provision.KindRole, DisplayName: "Guides", Priority: 10}
}

// changeJSON is ch's set fields, for comparing.
func changeJSON(ch provision.GroupChange) map[string]any {
	m := map[string]any{}
	if ch.DisplayName != nil {
		m["DisplayName"] = *ch.DisplayName
	}
	if ch.ExternalID != nil {
		m["ExternalID"] = *ch.ExternalID
	}
	if ch.Parent != nil {
		m["Parent"] = *ch.Parent
	}
	if ch.Priority != nil {
		m["Priority"] = *ch.Priority
	}
	if len(ch.Add) > 0 {
		m["Add"] = ch.Add
	}
	if len(ch.Remove) > 0 {
		m["Remove"] = ch.Remove
	}
	if ch.RemoveAll {
		m["RemoveAll"] = true
	}
	return m
}
