package options

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRegistryConfigFlag checks that --registry-config names itself in
// its errors (the credentials it reads are tested in sources).
func TestRegistryConfigFlag(t *testing.T) {
	if _, err := (&SourceFlags{RegistryConfig: filepath.Join(t.TempDir(), "missing.json")}).Keychain(); err == nil || !strings.Contains(err.Error(), "--registry-config") {
		t.Errorf("missing file: %v", err)
	}
}
