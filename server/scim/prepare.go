package scim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/elimity-com/scim/schema"
	"github.com/scim2/filter-parser/v2"
	"golang.org/x/time/rate"
)

// prepare returns the body the library gets and what the request costs
// beyond its unit: for a PATCH, its operations on attributes the gateway
// does not keep are dropped (as a create ignores them: Entra ID's default
// mappings send phoneNumbers and addresses), and each operation and each
// member it names costs one; for a POST or PUT of a group, each member.
// A body that is not a JSON object is left as it is, for the library to
// refuse.
func (h *handler) prepare(method, path string, body []byte) ([]byte, int64) {
	var main schema.Schema
	var exts []schema.Schema
	switch {
	case strings.HasPrefix(path, "/Users"):
		main, exts = h.userType.Schema, []schema.Schema{enterpriseSchema()}
	case strings.HasPrefix(path, "/Groups"):
		main, exts = h.groupType.Schema, []schema.Schema{gatewayGroupSchema()}
	default:
		return body, 0
	}
	var doc map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&doc) != nil {
		return body, 0
	}
	if method != http.MethodPatch {
		return body, countMembers(doc)
	}
	key := ""
	for k := range doc {
		if strings.EqualFold(k, "Operations") {
			key = k
		}
	}
	var ops []map[string]any
	if key == "" || unmarshalNumber(doc[key], &ops) != nil {
		return body, 0
	}
	k := known{main: main, exts: exts}
	var kept []map[string]any
	cost := int64(0)
	changed := false
	for _, op := range ops {
		cost++
		var path, valueKey string
		var value any
		for f, v := range op {
			switch strings.ToLower(f) {
			case "path":
				path, _ = v.(string)
			case "value":
				value, valueKey = v, f
			}
		}
		if path != "" {
			p, err := filter.ParsePath([]byte(path))
			if err == nil && !k.has(p.AttributePath) {
				changed = true
				continue // an attribute the gateway does not keep
			}
			if err == nil && isManager(p.AttributePath) && p.ValueExpression == nil && p.SubAttribute == nil {
				if v, ok := managerValue(value); ok {
					op[valueKey], changed = v, true
				}
			}
			if strings.EqualFold(strings.TrimSpace(path), "members") || strings.HasPrefix(strings.ToLower(path), "members[") {
				cost += int64(len(asList(value)))
			}
		} else if m, ok := value.(map[string]any); ok {
			for f, v := range m {
				if strings.EqualFold(f, "id") {
					continue
				}
				if ext, ok := k.extension(f); ok {
					if sub, ok := v.(map[string]any); ok {
						for sf, sv := range sub {
							if _, ok := ext.Attributes.ContainsAttribute(sf); !ok {
								delete(sub, sf)
								changed = true
							} else if ext.ID == EnterpriseSchema && strings.EqualFold(sf, "manager") {
								if mv, ok := managerValue(sv); ok {
									sub[sf], changed = mv, true
								}
							}
						}
					}
					continue
				}
				p, err := filter.ParseAttrPath([]byte(f))
				if err == nil && !k.has(p) {
					delete(m, f)
					changed = true
					continue
				}
				if err == nil && isManager(p) && p.SubAttribute == nil {
					if mv, ok := managerValue(v); ok {
						m[f], changed = mv, true
					}
				}
				if strings.EqualFold(f, "members") {
					cost += int64(len(asList(v)))
				}
			}
		}
		kept = append(kept, op)
	}
	if changed {
		if len(kept) == 0 {
			// Nothing the gateway keeps: a no-op the library still
			// validates (it refuses an empty list).
			kept = []map[string]any{{"op": "add", "value": map[string]any{}}}
		}
		raw, err := json.Marshal(kept)
		if err == nil {
			doc[key] = raw
			if b, err := json.Marshal(doc); err == nil {
				body = b
			}
		}
	}
	return body, cost
}

// isManager reports whether p is the enterprise extension's manager.
func isManager(p filter.AttributePath) bool {
	return strings.EqualFold(p.URI(), EnterpriseSchema) && strings.EqualFold(p.AttributeName, "manager")
}

// managerValue turns the manager as Entra ID sends it, the manager's id
// as a string, into the complex value the schema has ({"value": id}).
func managerValue(v any) (map[string]any, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	return map[string]any{"value": s}, true
}

// known tells the attributes of a resource type's schemas.
type known struct {
	main schema.Schema
	exts []schema.Schema
}

func (k known) extension(name string) (schema.Schema, bool) {
	for _, e := range k.exts {
		if strings.EqualFold(e.ID, name) {
			return e, true
		}
	}
	return schema.Schema{}, false
}

// has reports whether p names an attribute of the schemas (or a common
// one a client may write: externalId).
func (k known) has(p filter.AttributePath) bool {
	s := k.main
	if uri := p.URI(); uri != "" && !strings.EqualFold(uri, k.main.ID) {
		ext, ok := k.extension(uri)
		if !ok {
			return false
		}
		s = ext
	} else if strings.EqualFold(p.AttributeName, "externalId") {
		return true
	}
	_, ok := s.Attributes.ContainsAttribute(p.AttributeName)
	return ok
}

// countMembers is the members a POST or PUT body names.
func countMembers(doc map[string]json.RawMessage) int64 {
	for k, v := range doc {
		if strings.EqualFold(k, "members") {
			var list []json.RawMessage
			if json.Unmarshal(v, &list) == nil {
				return int64(len(list))
			}
		}
	}
	return 0
}

func asList(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case nil:
		return nil
	default:
		return []any{v}
	}
}

func unmarshalNumber(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

// limiter is the clients' rate limits: a token bucket per client name of
// perMinute units, refilled evenly.
type limiter struct {
	perMinute int64
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
}

func newLimiter(perMinute int64) *limiter {
	return &limiter{perMinute: perMinute, buckets: map[string]*rate.Limiter{}}
}

// take spends n units of client's budget at now; when they are not there
// it spends nothing and returns how long until they are (n over the
// whole budget: a minute).
func (l *limiter) take(client string, n int64, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	b := l.buckets[client]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), int(l.perMinute))
		l.buckets[client] = b
	}
	l.mu.Unlock()
	if n > l.perMinute {
		n = l.perMinute // a body larger than the budget waits for all of it
	}
	res := b.ReserveN(now, int(n))
	if !res.OK() {
		return time.Minute, false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}
