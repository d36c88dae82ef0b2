package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns the path of Debian's chromium, which scripts/deps.sh
// installs, for the browser tests (chromedp). Without it the test skips,
// except in CI (CI=true), where it fails: there the browser tests must run.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (scripts/deps.sh installs it); the browser tests must run in CI")
	}
	t.Skip("chromium is not installed (run scripts/deps.sh)")
	return ""
}
