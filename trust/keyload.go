package trust

// Key files: reading the keys that sign and verify, and writing new ones.
// This file belongs to package trust (the split of index moves it there).

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/internal/atomicfile"
)

// maxKeyFile bounds the bytes read from a key file: a PEM ed25519 key is
// about 120 bytes, a root key list far below this.
const maxKeyFile = 64 << 10

// ErrKeyVariableEmpty is returned by PrivateKeyFromEnv for a variable that
// is unset or holds only white space (a CI secret not passed to the job).
var ErrKeyVariableEmpty = errors.New("the variable is unset or empty")

// LoadPrivateKey reads the PEM private key file at path. When others may
// read the file, warnf (when not nil) receives a warning naming it and the
// chmod that fixes it. Errors name the file, never its content.
func LoadPrivateKey(path string, warnf func(format string, args ...any)) (*PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 && warnf != nil {
		warnf("warning: key %s is readable by others (mode %04o); run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return k, nil
}

// LoadSigners reads each private key file of paths, in order, as a
// signer (see LoadPrivateKey); nil for no paths.
func LoadSigners(paths []string, warnf func(format string, args ...any)) ([]Signer, error) {
	var out []Signer
	for _, p := range paths {
		k, err := LoadPrivateKey(p, warnf)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// PrivateKeyFromEnv parses the PEM private key held by the environment
// variable name, looked up with getenv (os.Getenv, or a test's
// environment): how CI passes a signing key, from a secret, without a
// file. An unset or blank variable is ErrKeyVariableEmpty. Errors never
// hold the variable's content and do not name it: the caller says where
// it came from (the flag that named it).
func PrivateKeyFromEnv(getenv func(string) string, name string) (*PrivateKey, error) {
	v := getenv(name)
	if strings.TrimSpace(v) == "" {
		return nil, ErrKeyVariableEmpty
	}
	return ParsePrivateKey([]byte(v))
}

// LoadPublicKey reads the PEM public key file at path; with acceptPrivate
// a private key file is accepted too, for its public half (so that a root
// key holder can name the one file they hold).
func LoadPublicKey(path string, acceptPrivate bool) (*PublicKey, error) {
	b, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	if acceptPrivate && strings.Contains(string(b), "PRIVATE KEY") {
		k, err := ParsePrivateKey(b)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", path, err)
		}
		return k.Public(), nil
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return k, nil
}

// LoadPublicKeys reads each public key file of paths, in order (see
// LoadPublicKey); nil for no paths.
func LoadPublicKeys(paths []string, acceptPrivate bool) ([]*PublicKey, error) {
	var out []*PublicKey
	for _, p := range paths {
		k, err := LoadPublicKey(p, acceptPrivate)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// LoadTrust reads the index key files and root key files that verify a
// published index into a Trust, with their thresholds (0 for the default
// of 1).
func LoadTrust(indexKeys []string, threshold int, rootKeys []string, rootThreshold int) (*Trust, error) {
	t := &Trust{Threshold: threshold, RootThreshold: rootThreshold}
	var err error
	if t.IndexKeys, err = LoadPublicKeys(indexKeys, false); err != nil {
		return nil, err
	}
	if t.RootKeys, err = LoadPublicKeys(rootKeys, false); err != nil {
		return nil, err
	}
	return t, nil
}

// readKeyFile reads a key file, refusing one over maxKeyFile bytes.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("key %s: larger than %d bytes, so not a PEM key; name the .key or .pub file", path, maxKeyFile)
	}
	return b, nil
}

// WriteKeyPair writes k as prefix.key (PEM "PRIVATE KEY", PKCS #8, mode
// 0600) and its public half as prefix.pub (PEM "PUBLIC KEY", mode 0644),
// creating prefix's directory. An existing file is never overwritten, and
// each file is written whole or not at all; when prefix.pub cannot be
// written, prefix.key is removed again.
func WriteKeyPair(prefix string, k *PrivateKey) error {
	priv, err := k.MarshalPEM()
	if err != nil {
		return err
	}
	for _, p := range []string{prefix + ".key", prefix + ".pub"} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s exists; refusing to overwrite a key (remove it first if you mean to replace it)", p)
		}
	}
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return err
	}
	if err := writeNew(prefix+".key", priv, 0o600); err != nil {
		return err
	}
	if err := writeNew(prefix+".pub", k.Public().PEM(), 0o644); err != nil {
		os.Remove(prefix + ".key")
		return err
	}
	return nil
}

// LoadOrCreateKey returns the private key in the file at path, or, when
// there is no such file, generates one and writes it there (mode 0600,
// whole or not at all, never over a file another process wrote
// meanwhile); created says which.
func LoadOrCreateKey(path string) (k *PrivateKey, created bool, err error) {
	if data, err := readKeyFile(path); err == nil {
		k, err := ParsePrivateKey(data)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return k, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	if k, err = GenerateKey(rand.Reader); err != nil {
		return nil, false, err
	}
	pem, err := k.MarshalPEM()
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, false, err
	}
	if err := writeNew(path, pem, 0o600); err != nil {
		return nil, false, err
	}
	return k, true, nil
}

// writeNew writes data to a temporary file beside path and links it to
// path, which fails if path exists: a new file, written whole or not at
// all, with mode perm (the temporary file is 0600 until then).
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := atomicfile.Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.CommitNew()
}
