package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// raw sends body to /graphql with method and an optional token, with
// Content-Type application/json, and returns the answer as it is.
func (g *gw) raw(method, token, body string, header ...string) rawResponse {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.url+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s /graphql: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

func mustJSON(v any) string { return string(mustJSONBytes(v)) }

func mustJSONBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// errorBody is a GraphQL response as the HTTP tests read it.
type errorBody struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// TestHTTPSpec checks the GraphQL-over-HTTP answers: statuses, media types,
// and an extensions.code on every error body.
func TestHTTPSpec(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	q := `{"query": "{ __typename }"}`
	tests := []struct {
		name        string
		method      string
		body        string
		header      []string
		status      int
		code        string // "" = success
		contentType string
		hasData     bool
	}{
		{"a query", "POST", q, nil, 200, "", "application/json", true},
		{"graphql-response+json preferred", "POST", q, []string{"Accept", "application/graphql-response+json, application/json;q=0.9"}, 200, "", "application/graphql-response+json", true},
		{"json preferred by q", "POST", q, []string{"Accept", "application/graphql-response+json;q=0.5, application/json"}, 200, "", "application/json", true},
		{"*/*", "POST", q, []string{"Accept", "*/*"}, 200, "", "application/json", true},
		{"nothing acceptable", "POST", q, []string{"Accept", "text/html"}, 406, "NOT_ACCEPTABLE", "application/json", false},
		{"charset utf-8", "POST", q, []string{"Content-Type", "application/json; charset=utf-8"}, 200, "", "application/json", true},
		{"another charset", "POST", q, []string{"Content-Type", "application/json; charset=latin1"}, 415, "UNSUPPORTED_MEDIA_TYPE", "application/json", false},
		{"no content type", "POST", q, []string{"Content-Type", ""}, 415, "UNSUPPORTED_MEDIA_TYPE", "application/json", false},
		{"form", "POST", "query=%7B__typename%7D", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "UNSUPPORTED_MEDIA_TYPE", "application/json", false},
		{"PATCH", "PATCH", q, nil, 405, "METHOD_NOT_ALLOWED", "application/json", false},
		{"HEAD", "HEAD", "", nil, 405, "", "application/json", false},
		{"empty body", "POST", "", nil, 400, "BAD_REQUEST", "application/json", false},
		{"truncated JSON", "POST", `{"query": "{ __typename }"`, nil, 400, "BAD_REQUEST", "application/json", false},
		{"trailing data", "POST", q + ` {}`, nil, 400, "BAD_REQUEST", "application/json", false},
		{"query not a string", "POST", `{"query": 5}`, nil, 400, "BAD_REQUEST", "application/json", false},
		{"variables not an object", "POST", `{"query": "{ __typename }", "variables": [1]}`, nil, 400, "BAD_REQUEST", "application/json", false},
		{"no query", "POST", `{"variables": {}}`, nil, 400, "BAD_REQUEST", "application/json", false},
		{"a JSON string", "POST", `"{ __typename }"`, nil, 400, "BAD_REQUEST", "application/json", false},
		{"parse error, json", "POST", `{"query": "{ me { "}`, nil, 200, "GRAPHQL_PARSE_FAILED", "application/json", false},
		{"parse error, graphql-response+json", "POST", `{"query": "{ me { "}`, []string{"Accept", "application/graphql-response+json"}, 400, "GRAPHQL_PARSE_FAILED", "application/graphql-response+json", false},
		{"validation error, json", "POST", `{"query": "{ nope }"}`, nil, 200, "GRAPHQL_VALIDATION_FAILED", "application/json", false},
		{"validation error, graphql-response+json", "POST", `{"query": "{ nope }"}`, []string{"Accept", "application/graphql-response+json"}, 400, "GRAPHQL_VALIDATION_FAILED", "application/graphql-response+json", false},
		{"unknown operation", "POST", `{"query": "query A { __typename }", "operationName": "B"}`, nil, 200, "GRAPHQL_VALIDATION_FAILED", "application/json", false},
		{"bad variable", "POST", `{"query": "query($n: Int) { homeTimeline(first: $n) { edges { cursor } } }", "variables": {"n": "x"}}`, nil, 200, "GRAPHQL_VALIDATION_FAILED", "application/json", false},
		{"subscription over HTTP", "POST", `{"query": "subscription { homeTimelineUpdates { id } }"}`, nil, 200, "BAD_REQUEST", "application/json", false},
		{"a WebSocket upgrade that is not one", "GET", "", []string{"Upgrade", "websocket"}, 400, "BAD_REQUEST", "application/json", false},
		{"an execution error keeps data", "POST", `{"query": "{ user(id: \"x\") { id } }"}`, nil, 200, "BAD_USER_INPUT", "application/json", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := g.raw(tt.method, "", tt.body, tt.header...)
			if r.status != tt.status {
				t.Errorf("HTTP %d, want %d: %s", r.status, tt.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, tt.contentType) {
				t.Errorf("Content-Type %q, want %s", ct, tt.contentType)
			}
			if tt.method == "HEAD" {
				return
			}
			var out errorBody
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, r.body)
			}
			if (out.Data != nil) != tt.hasData {
				t.Errorf("data present %v, want %v: %s", out.Data != nil, tt.hasData, r.body)
			}
			if tt.code == "" {
				if len(out.Errors) > 0 {
					t.Errorf("errors: %s", r.body)
				}
				return
			}
			if len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != tt.code {
				t.Errorf("want code %s: %s", tt.code, r.body)
			}
			for _, e := range out.Errors {
				if e.Extensions["code"] == nil {
					t.Errorf("an error without a code: %s", r.body)
				}
			}
		})
	}
}

// TestHTTPGet: queries over GET with variables; mutations refused with 405.
func TestHTTPGet(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	get := func(params url.Values) rawResponse {
		resp, err := http.Get(g.url + "/graphql?" + params.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
	}
	r := get(url.Values{"query": {`query($id: ID!) { user(id: $id) { id } }`}, "variables": {`{"id": "1"}`}})
	if r.status != 200 || !strings.Contains(string(r.body), `"user":null`) {
		t.Errorf("GET query: HTTP %d %s", r.status, r.body)
	}
	r = get(url.Values{"query": {`mutation { login(username: "a", password: "bbbbbbbb") { token } }`}})
	if r.status != 405 || r.header.Get("Allow") != "POST" || !strings.Contains(string(r.body), "METHOD_NOT_ALLOWED") {
		t.Errorf("GET mutation: HTTP %d Allow %q %s", r.status, r.header.Get("Allow"), r.body)
	}
	r = get(url.Values{"query": {`{ __typename }`}, "variables": {`{"a": `}})
	if r.status != 400 || !strings.Contains(string(r.body), "BAD_REQUEST") {
		t.Errorf("GET bad variables: HTTP %d %s", r.status, r.body)
	}
	r = get(url.Values{})
	if r.status != 400 || !strings.Contains(string(r.body), "BAD_REQUEST") {
		t.Errorf("GET without a query: HTTP %d %s", r.status, r.body)
	}
}

// TestBatch: a JSON array of operations answers an array, each operation
// measured and charged on its own; too many is refused.
func TestBatch(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	r := g.raw("POST", "", `[{"query": "{ __typename }"}, {"query": "{ user(id: \"x\") { id } }"}, {"query": "{ nope }"}]`)
	var out []errorBody
	if err := json.Unmarshal(r.body, &out); err != nil || r.status != 200 || len(out) != 3 {
		t.Fatalf("HTTP %d %v: %s", r.status, err, r.body)
	}
	if len(out[0].Errors) != 0 || out[1].Errors[0].Extensions["code"] != "BAD_USER_INPUT" || out[2].Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("batch answers: %s", r.body)
	}
	r = g.raw("POST", "", "["+strings.Repeat(`{"query": "{ __typename }"},`, 10)+`{"query": "{ __typename }"}]`)
	if r.status != 400 || !strings.Contains(string(r.body), "BAD_REQUEST") {
		t.Errorf("11 operations: HTTP %d %s", r.status, r.body)
	}
	r = g.raw("POST", "", `[]`)
	if r.status != 400 {
		t.Errorf("empty batch: HTTP %d %s", r.status, r.body)
	}
}

// introspectionQuery is graphql-js 16's getIntrospectionQuery(), what
// GraphiQL sends.
const introspectionQuery = `
    query IntrospectionQuery {
      __schema {
        queryType { name }
        mutationType { name }
        subscriptionType { name }
        types {
          ...FullType
        }
        directives {
          name
          description
          locations
          args {
            ...InputValue
          }
        }
      }
    }

    fragment FullType on __Type {
      kind
      name
      description
      fields(includeDeprecated: true) {
        name
        description
        args {
          ...InputValue
        }
        type {
          ...TypeRef
        }
        isDeprecated
        deprecationReason
      }
      inputFields {
        ...InputValue
      }
      interfaces {
        ...TypeRef
      }
      enumValues(includeDeprecated: true) {
        name
        description
        isDeprecated
        deprecationReason
      }
      possibleTypes {
        ...TypeRef
      }
    }

    fragment InputValue on __InputValue {
      name
      description
      type { ...TypeRef }
      defaultValue
    }

    fragment TypeRef on __Type {
      kind
      name
      ofType {
        kind
        name
        ofType {
          kind
          name
          ofType {
            kind
            name
            ofType {
              kind
              name
              ofType {
                kind
                name
                ofType {
                  kind
                  name
                  ofType {
                    kind
                    name
                  }
                }
              }
            }
          }
        }
      }
    }
`
