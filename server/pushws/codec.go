package pushws

import (
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// graphqlTransportWS is the WebSocket subprotocol the transport serves.
const graphqlTransportWS = "graphql-transport-ws"

// Close codes of graphql-transport-ws.
const (
	closeBadMessage   = 4400 // not JSON, an unknown type, a subscribe without id
	closeUnauthorized = 4401 // a subscribe before connection_init
	closeForbidden    = 4403 // a refused connection_init
	closeInitTimeout  = 4408 // no connection_init within initTimeout
	closeDuplicateID  = 4409 // a subscribe with a running operation's id
	closeTooManyInits = 4429 // a second connection_init
	// closeUnread (WebSocket's policy violation) closes a connection whose
	// subscribes over MaxOperations keep coming while more than maxPending
	// bytes of its messages wait for its socket: refusals it does not read
	// would pile up without end.
	closeUnread = 1008
)

// message is a graphql-transport-ws message.
type message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// frameBytes is what a server writes for a message of n bytes cut into
// frames of at most max: each frame's header (2, 4 or 10 bytes; no mask)
// and payload.
func frameBytes(n, max int) int64 {
	total := int64(0)
	for first := true; first || n > 0; first = false {
		f := min(n, max)
		total += int64(f) + 2
		switch {
		case f > 65535:
			total += 8
		case f > 125:
			total += 2
		}
		n -= f
	}
	return total
}

// PayloadKey is the Extensions key of a response that is a payload encoded
// whole, a json.RawMessage (incremental delivery's subsequent payloads,
// which graphql.Response cannot express): its "next" message carries that
// payload as it is.
const PayloadKey = "\x00payload"

// nextMessage is the "next" message of operation id carrying resp.
func nextMessage(id string, resp *graphql.Response) message {
	if b, ok := resp.Extensions[PayloadKey].(json.RawMessage); ok && len(resp.Extensions) == 1 {
		return message{ID: id, Type: "next", Payload: b}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		panic(err) // a response always marshals
	}
	return message{ID: id, Type: "next", Payload: b}
}

// errorMessage is the "error" message of operation id: it failed with errs.
func errorMessage(id string, errs ...*gqlerror.Error) message {
	b, err := json.Marshal(errs)
	if err != nil {
		panic(err)
	}
	return message{ID: id, Type: "error", Payload: b}
}
