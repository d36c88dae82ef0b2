package server

// Error codes the server itself gives (extensions.code). The domain's codes
// (BAD_USER_INPUT, NOT_FOUND, UNAUTHENTICATED, FORBIDDEN) are in package
// weibo; gqlgen gives GRAPHQL_PARSE_FAILED and GRAPHQL_VALIDATION_FAILED.
const (
	// CodeInternal: an error the caller cannot fix (details are logged with
	// the request id, which the error carries).
	CodeInternal = "INTERNAL_SERVER_ERROR"
	// CodeQueryTooComplex: the query can return more nodes than
	// --max-query-nodes, or is bigger than --max-query-tokens,
	// --max-query-fields, --max-query-aliases or --max-query-overlap allow
	// (extensions: measure, cost, limit). Refused before execution.
	CodeQueryTooComplex = "QUERY_TOO_COMPLEX"
	// CodeQueryTooDeep: fields nest deeper than --max-query-depth
	// (extensions: measure "depth", cost, limit). Refused before execution.
	CodeQueryTooDeep = "QUERY_TOO_DEEP"
	// CodeRateLimited: the client's query budget (--rate-limit nodes per
	// minute) is spent, or too many logins failed; HTTP 429 with
	// Retry-After, and extensions.retryAfter in seconds.
	CodeRateLimited = "RATE_LIMITED"
	// CodeTooManyOperations: a WebSocket subscribe (graphql-transport-ws)
	// or start (graphql-ws) while its connection runs
	// --max-ws-operations operations already (extensions: limit); the
	// "error" message for its id, the connection stays open.
	CodeTooManyOperations = "TOO_MANY_OPERATIONS"
	// CodeTooManyConnections: a WebSocket upgrade while its user or its
	// client address holds --max-ws-connections-per-user or
	// --max-ws-connections-per-address connections already (extensions:
	// measure "user" or "address", limit); HTTP 429.
	CodeTooManyConnections = "TOO_MANY_CONNECTIONS"
	// CodeBadRequest: the HTTP request is not a GraphQL request: malformed
	// JSON, no query, an over-deep JSON body (HTTP 400).
	CodeBadRequest = "BAD_REQUEST"
	// CodePayloadTooLarge: the body is over --max-body-bytes (HTTP 413).
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// CodeMethodNotAllowed: not GET or POST, or a mutation over GET (HTTP 405).
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	// CodeUnsupportedMediaType: a POST body that is not application/json (HTTP 415).
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	// CodeNotAcceptable: the Accept header allows neither
	// application/graphql-response+json nor application/json (HTTP 406).
	CodeNotAcceptable = "NOT_ACCEPTABLE"
	// CodeResponseTooLarge: the response would be over --max-response-bytes.
	CodeResponseTooLarge = "RESPONSE_TOO_LARGE"
	// CodeTimeout: the request ran out of --request-timeout; work stopped.
	CodeTimeout = "TIMEOUT"
	// CodeValidationFailed is gqlgen's code for an invalid document; the
	// server also gives it to introspection when --introspection=false
	// (extensions.reason INTROSPECTION_DISABLED).
	CodeValidationFailed = "GRAPHQL_VALIDATION_FAILED"
)
