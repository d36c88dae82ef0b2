package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weibohbase/gateway/dataset"
)

// Fixture returns the bytes of the shared test file name
// (../shared/fixtures beside the repository, see its README): in CI
// (CI=true) a missing file fails the test, elsewhere it skips it.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	root := dataset.ModuleRoot()
	b, err := os.ReadFile(filepath.Join(root, "..", "shared", "fixtures", name))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("fixture %s: %v (CI has ../shared/fixtures beside the clone)", name, err)
		}
		t.Skipf("fixture %s is not beside the repository: %v", name, err)
	}
	return b
}

// PhoneJPEG is the shared phone-style JPEG: 640 × 480 pixels with EXIF
// orientation 6 (shown 480 × 640), camera make and model, software and a
// GPS position.
const PhoneJPEG = "photo-gps-orientation6.jpg"
