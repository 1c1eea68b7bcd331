package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// LockPath is the file a publish into the site directory dir holds locked
// while it writes: in the system's temporary directory, named after the
// directory's absolute, symlink-free path, so that two publishes into one
// site on a machine meet there and the lock never lands in the site that
// is deployed.
func LockPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "kbuild-publish-"+hex.EncodeToString(sum[:8])+".lock"), nil
}
