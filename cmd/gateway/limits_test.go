package main

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/server"
)

// TestSignupFlags: --signup-rate and --signup-window (and
// GATEWAY_SIGNUP_RATE, GATEWAY_SIGNUP_WINDOW; a flag given wins) reach
// server.Config.Signups, 0 turning the limit off as for every limit; a
// malformed variable, or a window not positive while the limit is on, is
// refused before anything starts.
func TestSignupFlags(t *testing.T) {
	tests := []struct {
		args   []string
		env    map[string]string
		want   server.SignupLimit
		failed string
	}{
		{args: nil, want: server.SignupLimit{Rate: 25, Window: 5 * time.Minute}},
		{args: []string{"--signup-rate", "5", "--signup-window", "1m"}, want: server.SignupLimit{Rate: 5, Window: time.Minute}},
		{env: map[string]string{"GATEWAY_SIGNUP_RATE": "7", "GATEWAY_SIGNUP_WINDOW": "30s"}, want: server.SignupLimit{Rate: 7, Window: 30 * time.Second}},
		{args: []string{"--signup-rate", "9"}, env: map[string]string{"GATEWAY_SIGNUP_RATE": "7"}, want: server.SignupLimit{Rate: 9, Window: 5 * time.Minute}},
		{args: []string{"--signup-rate", "0"}, want: server.SignupLimit{Rate: -1, Window: 5 * time.Minute}},
		{env: map[string]string{"GATEWAY_SIGNUP_RATE": "-3"}, want: server.SignupLimit{Rate: -3, Window: 5 * time.Minute}},
		{args: []string{"--signup-rate", "0", "--signup-window", "0"}, want: server.SignupLimit{Rate: -1, Window: 0}},
		{env: map[string]string{"GATEWAY_SIGNUP_RATE": "lots"}, failed: `GATEWAY_SIGNUP_RATE="lots"`},
		{env: map[string]string{"GATEWAY_SIGNUP_WINDOW": "5"}, failed: `GATEWAY_SIGNUP_WINDOW="5"`},
		{args: []string{"--signup-window", "0"}, failed: "--signup-window 0s: want a positive duration"},
		{env: map[string]string{"GATEWAY_SIGNUP_WINDOW": "-1m"}, failed: "--signup-window -1m0s: want a positive duration"},
	}
	keys := []string{"GATEWAY_SIGNUP_RATE", "GATEWAY_SIGNUP_WINDOW"}
	for _, tt := range tests {
		t.Run(caseName(tt.args, tt.env), func(t *testing.T) {
			c, err := parseLimits(t, keys, tt.args, tt.env)
			if refused(t, err, tt.failed) {
				return
			}
			if got := c.Signups; got != tt.want {
				t.Errorf("Config.Signups = %+v, want %+v", got, tt.want)
			}
		})
	}
	// The usage names each flag's variable and default.
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	registerLimitFlags(fs)
	for name, env := range map[string]string{"signup-rate": "GATEWAY_SIGNUP_RATE", "signup-window": "GATEWAY_SIGNUP_WINDOW"} {
		if fl := fs.Lookup(name); fl == nil || !strings.Contains(fl.Usage, "(env "+env+")") {
			t.Errorf("--%s: %+v, want a usage naming %s", name, fl, env)
		}
	}
}

// TestWebSocketLimitFlags: --max-ws-operations,
// --max-ws-connections-per-user and --max-ws-connections-per-address (and
// their GATEWAY_ variables; a flag given wins) reach server.Config, 0
// turning a limit off; a malformed variable is refused.
func TestWebSocketLimitFlags(t *testing.T) {
	keys := []string{"GATEWAY_MAX_WS_OPERATIONS", "GATEWAY_MAX_WS_CONNECTIONS_PER_USER", "GATEWAY_MAX_WS_CONNECTIONS_PER_ADDRESS"}
	type limits struct{ ops, perUser, perAddr int }
	tests := []struct {
		args   []string
		env    map[string]string
		want   limits
		failed string
	}{
		{want: limits{100, 20, 100}},
		{args: []string{"--max-ws-operations", "5", "--max-ws-connections-per-user", "2", "--max-ws-connections-per-address", "3"}, want: limits{5, 2, 3}},
		{env: map[string]string{keys[0]: "7", keys[1]: "8", keys[2]: "9"}, want: limits{7, 8, 9}},
		{args: []string{"--max-ws-operations", "6"}, env: map[string]string{keys[0]: "7"}, want: limits{6, 20, 100}},
		{args: []string{"--max-ws-operations", "0", "--max-ws-connections-per-user", "0", "--max-ws-connections-per-address", "0"}, want: limits{-1, -1, -1}},
		{env: map[string]string{keys[2]: "many"}, failed: `GATEWAY_MAX_WS_CONNECTIONS_PER_ADDRESS="many"`},
	}
	for _, tt := range tests {
		t.Run(caseName(tt.args, tt.env), func(t *testing.T) {
			c, err := parseLimits(t, keys, tt.args, tt.env)
			if refused(t, err, tt.failed) {
				return
			}
			if got := (limits{c.MaxWebSocketOperations, c.MaxWebSocketsPerUser, c.MaxWebSocketsPerAddress}); got != tt.want {
				t.Errorf("Config = %+v, want %+v", got, tt.want)
			}
		})
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	registerLimitFlags(fs)
	for i, name := range []string{"max-ws-operations", "max-ws-connections-per-user", "max-ws-connections-per-address"} {
		if fl := fs.Lookup(name); fl == nil || !strings.Contains(fl.Usage, "(env "+keys[i]+")") {
			t.Errorf("--%s: %+v, want a usage naming %s", name, fl, keys[i])
		}
	}
}

// caseName names a flags case by its arguments and variables.
func caseName(args []string, env map[string]string) string {
	name := strings.Join(args, " ")
	for k, v := range env {
		name += " " + k + "=" + v
	}
	return name
}

// parseLimits parses the limit flags of serve from args with the
// environment env (every variable of keys unset first, restored after the
// test) and returns the server.Config they make, or their error.
func parseLimits(t *testing.T, keys, args []string, env map[string]string) (server.Config, error) {
	t.Helper()
	for _, k := range keys {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := registerLimitFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := f.err(); err != nil {
		return server.Config{}, err
	}
	return f.config(server.Config{}), nil
}

// refused checks err against failed, the text the case must be refused
// with ("" for none), and reports whether the case was refused.
func refused(t *testing.T, err error, failed string) bool {
	t.Helper()
	switch {
	case failed == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case failed != "" && (err == nil || !strings.Contains(err.Error(), failed)):
		t.Fatalf("err = %v, want one saying %q", err, failed)
	}
	return failed != ""
}

// TestUploadFlag: --max-upload-bytes (and GATEWAY_MAX_UPLOAD_BYTES; a flag
// given wins) reaches server.Config.MaxUploadBytes, 20 MiB by default, 0
// turning the limit off; a malformed variable is refused.
func TestUploadFlag(t *testing.T) {
	tests := []struct {
		args   []string
		env    map[string]string
		want   int64
		failed string
	}{
		{args: nil, want: server.DefaultMaxUploadBytes},
		{args: []string{"--max-upload-bytes", "1000"}, want: 1000},
		{env: map[string]string{"GATEWAY_MAX_UPLOAD_BYTES": "2000"}, want: 2000},
		{args: []string{"--max-upload-bytes", "3000"}, env: map[string]string{"GATEWAY_MAX_UPLOAD_BYTES": "2000"}, want: 3000},
		{args: []string{"--max-upload-bytes", "0"}, want: -1},
		{env: map[string]string{"GATEWAY_MAX_UPLOAD_BYTES": "big"}, failed: `GATEWAY_MAX_UPLOAD_BYTES="big"`},
	}
	for _, tt := range tests {
		t.Run(caseName(tt.args, tt.env), func(t *testing.T) {
			c, err := parseLimits(t, []string{"GATEWAY_MAX_UPLOAD_BYTES"}, tt.args, tt.env)
			if refused(t, err, tt.failed) {
				return
			}
			if c.MaxUploadBytes != tt.want {
				t.Errorf("Config.MaxUploadBytes = %d, want %d", c.MaxUploadBytes, tt.want)
			}
		})
	}
	if server.DefaultMaxUploadBytes != 20<<20 {
		t.Errorf("DefaultMaxUploadBytes = %d, want 20 MiB", server.DefaultMaxUploadBytes)
	}
}
