package scim

import (
	"net/http"
	"strings"

	"github.com/elimity-com/scim/optional"
	"github.com/elimity-com/scim/schema"
)

// Schema URIs the handler serves and reads.
const (
	// UserSchema is the core User schema (RFC 7643 §4.1).
	UserSchema = "urn:ietf:params:scim:schemas:core:2.0:User"
	// EnterpriseSchema is the enterprise User extension (RFC 7643 §4.3).
	EnterpriseSchema = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	// GroupSchema is the core Group schema (RFC 7643 §4.2).
	GroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group"
	// GatewayGroupSchema is the gateway's Group extension: kind
	// ("department" | "role", immutable, default department), parent (a
	// department's parent department id, "" top level) and priority (a
	// role's, 1–1000, default 1).
	GatewayGroupSchema = "urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group"
	// PatchOpSchema is the schema of a PATCH request's body.
	PatchOpSchema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	// ErrorSchema is the schema of an error response.
	ErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"
)

// MaxResults is the most resources a list answers (filter.maxResults and
// the largest count).
const MaxResults = 200

func str(name string, caseExact bool, mut schema.AttributeMutability) schema.SimpleParams {
	return schema.SimpleStringParams(schema.StringParams{Name: name, CaseExact: caseExact, Mutability: mut})
}

func simple(name string) schema.CoreAttribute {
	return schema.SimpleCoreAttribute(str(name, false, schema.AttributeMutabilityReadWrite()))
}

// userSchema is the core User schema restricted to what the gateway
// keeps: attributes it does not keep are not listed (a create ignores
// them, a PATCH of them is dropped).
func userSchema() schema.Schema {
	rw := schema.AttributeMutabilityReadWrite()
	return schema.Schema{
		ID:          UserSchema,
		Name:        optional.NewString("User"),
		Description: optional.NewString("User Account"),
		Attributes: []schema.CoreAttribute{
			schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
				Name: "userName", Required: true, Uniqueness: schema.AttributeUniquenessServer(),
				Description: optional.NewString("The login name: 1–128 printable characters, unique ignoring case."),
			})),
			schema.ComplexCoreAttribute(schema.ComplexParams{
				Name: "name",
				SubAttributes: []schema.SimpleParams{
					str("formatted", false, rw), str("familyName", false, rw), str("givenName", false, rw),
					str("middleName", false, rw), str("honorificPrefix", false, rw), str("honorificSuffix", false, rw),
				},
			}),
			simple("displayName"),
			simple("title"),
			simple("preferredLanguage"),
			simple("locale"),
			schema.SimpleCoreAttribute(schema.SimpleBooleanParams(schema.BooleanParams{
				Name: "active", Description: optional.NewString("false: the user is suspended (tokens end, login refused)."),
			})),
			schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
				Name: "password", Mutability: schema.AttributeMutabilityWriteOnly(), Returned: schema.AttributeReturnedNever(),
				Description: optional.NewString("Write-only; stored hashed."),
			})),
			schema.ComplexCoreAttribute(schema.ComplexParams{
				Name: "emails", MultiValued: true,
				SubAttributes: []schema.SimpleParams{
					str("value", false, rw), str("display", false, rw),
					schema.SimpleStringParams(schema.StringParams{Name: "type", CanonicalValues: []string{"work", "home", "other"}}),
					schema.SimpleBooleanParams(schema.BooleanParams{Name: "primary"}),
				},
			}),
			schema.ComplexCoreAttribute(schema.ComplexParams{
				Name: "groups", MultiValued: true, Mutability: schema.AttributeMutabilityReadOnly(),
				Description: optional.NewString("The user's department, then roles (read-only: change a group's members)."),
				SubAttributes: []schema.SimpleParams{
					str("value", true, schema.AttributeMutabilityReadOnly()),
					schema.SimpleReferenceParams(schema.ReferenceParams{Name: "$ref", Mutability: schema.AttributeMutabilityReadOnly(), ReferenceTypes: []schema.AttributeReferenceType{"Group"}}),
					str("display", false, schema.AttributeMutabilityReadOnly()),
					schema.SimpleStringParams(schema.StringParams{Name: "type", CanonicalValues: []string{"direct"}, Mutability: schema.AttributeMutabilityReadOnly()}),
				},
			}),
		},
	}
}

// enterpriseSchema is the enterprise User extension.
func enterpriseSchema() schema.Schema {
	rw := schema.AttributeMutabilityReadWrite()
	return schema.Schema{
		ID:          EnterpriseSchema,
		Name:        optional.NewString("EnterpriseUser"),
		Description: optional.NewString("Enterprise User"),
		Attributes: []schema.CoreAttribute{
			simple("employeeNumber"), simple("costCenter"), simple("organization"), simple("division"), simple("department"),
			schema.ComplexCoreAttribute(schema.ComplexParams{
				Name: "manager",
				SubAttributes: []schema.SimpleParams{
					str("value", true, rw),
					schema.SimpleReferenceParams(schema.ReferenceParams{Name: "$ref", ReferenceTypes: []schema.AttributeReferenceType{"User"}}),
					str("displayName", false, schema.AttributeMutabilityReadOnly()),
				},
			}),
		},
	}
}

// groupSchema is the core Group schema.
func groupSchema() schema.Schema {
	s := schema.CoreGroupSchema()
	s.Description = optional.NewString("A department or a role (the gateway extension's kind)")
	return s
}

// gatewayGroupSchema is the gateway's Group extension.
func gatewayGroupSchema() schema.Schema {
	return schema.Schema{
		ID:          GatewayGroupSchema,
		Name:        optional.NewString("GatewayGroup"),
		Description: optional.NewString("What a group is in the gateway: a department or a role"),
		Attributes: []schema.CoreAttribute{
			schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
				Name: "kind", CanonicalValues: []string{"department", "role"}, Mutability: schema.AttributeMutabilityImmutable(),
				Description: optional.NewString("department (default): a user is in at most one, adding them moves them; role: many-to-many."),
			})),
			schema.SimpleCoreAttribute(schema.SimpleStringParams(schema.StringParams{
				Name: "parent", CaseExact: true,
				Description: optional.NewString("A department's parent department id (\"department:N\"), absent at the top level."),
			})),
			schema.SimpleCoreAttribute(schema.SimpleNumberParams(schema.NumberParams{
				Name: "priority", Type: schema.AttributeTypeInteger(),
				Description: optional.NewString("A role's priority for its members, 1–1000 (default 1)."),
			})),
		},
	}
}

// serviceProviderConfig is the body of /ServiceProviderConfig: what the
// handler implements, exactly (the library's own says etag false).
func serviceProviderConfig() map[string]any {
	return map[string]any{
		"schemas":          []string{"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"},
		"documentationUri": "https://github.com/weibohbase/gateway#provisioning-with-scim",
		"patch":            map[string]any{"supported": true},
		"bulk":             map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":           map[string]any{"supported": true, "maxResults": MaxResults},
		// The password is set by PUT or PATCH of attribute password.
		"changePassword": map[string]any{"supported": false},
		"sort":           map[string]any{"supported": false},
		"etag":           map[string]any{"supported": true},
		"authenticationSchemes": []map[string]any{{
			"type": "oauthbearertoken", "name": "OAuth Bearer Token", "primary": true,
			"description": "A provisioning client's token (gateway scim token create), in Authorization: Bearer.",
			"specUri":     "https://www.rfc-editor.org/info/rfc6750",
		}},
		"meta": map[string]any{"resourceType": "ServiceProviderConfig", "location": "/scim/v2/ServiceProviderConfig"},
	}
}

// isServiceProviderConfig reports whether r asks for the service provider
// configuration (path relative to /scim/v2).
func isServiceProviderConfig(r *http.Request, path string) bool {
	return r.Method == http.MethodGet && strings.TrimSuffix(path, "/") == "/ServiceProviderConfig"
}
