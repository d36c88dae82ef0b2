// Package gqlpost sends one GraphQL request over HTTP, for the load
// clients of `make bench` (bench/live, bench/internal/tokens).
package gqlpost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

var client = &http.Client{Timeout: 60 * time.Second}

// Do posts query with vars to base's /graphql (base is http://host:port)
// as token's user, without a token when token is empty, and decodes the
// answer's data into out, unless out is nil. The error is the transport's,
// an answer that is no GraphQL response (with its HTTP status and first
// 200 bytes), or the answer's first GraphQL error.
func Do(ctx context.Context, base, token, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("HTTP %d: %.200s", res.StatusCode, b)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("graphql: %s", r.Errors[0].Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Data, out)
}
