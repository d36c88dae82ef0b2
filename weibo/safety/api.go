package safety

import (
	"fmt"
	"io"
)

// contextNames are the GraphQL FilterContext values of the contexts.
var contextNames = map[Context]string{
	ContextHome:          "HOME",
	ContextNotifications: "NOTIFICATIONS",
	ContextTopic:         "TOPIC",
	ContextComments:      "COMMENTS",
}

// actionNames are the GraphQL FilterAction values of the actions.
var actionNames = map[Action]string{Hide: "HIDE", Warn: "WARN"}

// String is the context's GraphQL name (HOME, NOTIFICATIONS, TOPIC or
// COMMENTS).
func (c Context) String() string {
	if n, ok := contextNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Context(%d)", byte(c))
}

// MarshalGQL writes the context's GraphQL enum value, a quoted String.
func (c Context) MarshalGQL(w io.Writer) { _, _ = fmt.Fprintf(w, "%q", c.String()) }

// UnmarshalGQL reads a GraphQL FilterContext value; another value is an
// error (gqlgen's, before any resolver runs).
func (c *Context) UnmarshalGQL(v any) error {
	for k, n := range contextNames {
		if v == n {
			*c = k
			return nil
		}
	}
	return fmt.Errorf("%v is not a valid FilterContext", v)
}

// String is the action's GraphQL name (HIDE or WARN).
func (a Action) String() string {
	if n, ok := actionNames[a]; ok {
		return n
	}
	return fmt.Sprintf("Action(%d)", byte(a))
}

// MarshalGQL writes the action's GraphQL enum value, a quoted String.
func (a Action) MarshalGQL(w io.Writer) { _, _ = fmt.Fprintf(w, "%q", a.String()) }

// UnmarshalGQL reads a GraphQL FilterAction value; another value is an
// error.
func (a *Action) UnmarshalGQL(v any) error {
	for k, n := range actionNames {
		if v == n {
			*a = k
			return nil
		}
	}
	return fmt.Errorf("%v is not a valid FilterAction", v)
}
