package trust

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteKeyPairAndLoad(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "keys", "index")
	k, err := GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyPair(prefix, k); err != nil {
		t.Fatalf("WriteKeyPair: %v", err)
	}
	for file, want := range map[string]os.FileMode{prefix + ".key": 0o600, prefix + ".pub": 0o644} {
		fi, err := os.Stat(file)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %04o", file, fi.Mode().Perm(), err, want)
		}
	}
	if err := WriteKeyPair(prefix, k); err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
		t.Errorf("WriteKeyPair over an existing pair = %v, want a refusal", err)
	}

	var warnings []string
	warnf := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	priv, err := LoadPrivateKey(prefix+".key", warnf)
	if err != nil || priv.KeyID() != k.KeyID() || len(warnings) != 0 {
		t.Fatalf("LoadPrivateKey = %v, %v, warnings %q; want key %s and no warning", priv, err, warnings, k.KeyID())
	}
	if err := os.Chmod(prefix+".key", 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrivateKey(prefix+".key", warnf); err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "readable by others (mode 0644); run chmod 600 "+prefix+".key") {
		t.Errorf("LoadPrivateKey of a 0644 key: %v, warnings %q; want one warning with the chmod", err, warnings)
	}
	for _, tc := range []struct {
		name          string
		file          string
		acceptPrivate bool
		wantErr       string
	}{
		{"public key", prefix + ".pub", false, ""},
		{"private key for its public half", prefix + ".key", true, ""},
		{"private key where only public ones go", prefix + ".key", false, "key " + prefix + ".key: "},
		{"missing file", filepath.Join(dir, "nope.pub"), false, "key " + filepath.Join(dir, "nope.pub") + ": "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub, err := LoadPublicKey(tc.file, tc.acceptPrivate)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadPublicKey(%s, %v) = %v, want an error containing %q", tc.file, tc.acceptPrivate, err, tc.wantErr)
				}
				return
			}
			if err != nil || pub.KeyID() != k.KeyID() {
				t.Fatalf("LoadPublicKey(%s, %v) = %v, %v; want key %s", tc.file, tc.acceptPrivate, pub, err, k.KeyID())
			}
		})
	}
	tr, err := LoadTrust([]string{prefix + ".pub"}, 0, nil, 0)
	if err != nil || len(tr.IndexKeys) != 1 || tr.IndexKeys[0].KeyID() != k.KeyID() || len(tr.RootKeys) != 0 {
		t.Errorf("LoadTrust = %+v, %v; want the one index key", tr, err)
	}
}

func TestLoadPrivateKeyErrorsHideContent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.key")
	secret := "-----BEGIN PRIVATE KEY-----\nc2VjcmV0IGJ5dGVzIHRoYXQgYXJlIG5vdCBhIGtleQ==\n-----END PRIVATE KEY-----\n"
	if err := os.WriteFile(file, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPrivateKey(file, nil)
	if err == nil || !strings.Contains(err.Error(), "key "+file+": ") || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("LoadPrivateKey of a bad key = %v; want an error naming the file and not its content", err)
	}
	big := filepath.Join(t.TempDir(), "big.pub")
	if err := os.WriteFile(big, make([]byte, maxKeyFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPublicKey(big, false); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadPublicKey of a huge file = %v; want a size refusal", err)
	}
}

func TestPrivateKeyFromEnv(t *testing.T) {
	k, err := GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := k.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"KEY": string(pem), "BLANK": " \n", "JUNK": "not a key SECRETVALUE"}
	getenv := func(n string) string { return vars[n] }
	for _, tc := range []struct {
		name, variable string
		target         error
		wantErr        string
	}{
		{"key", "KEY", nil, ""},
		{"unset", "UNSET", ErrKeyVariableEmpty, "the variable is unset or empty"},
		{"blank", "BLANK", ErrKeyVariableEmpty, "the variable is unset or empty"},
		{"not a key", "JUNK", nil, "PEM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PrivateKeyFromEnv(getenv, tc.variable)
			if tc.wantErr == "" {
				if err != nil || got.KeyID() != k.KeyID() {
					t.Fatalf("PrivateKeyFromEnv(%s) = %v, %v; want key %s", tc.variable, got, err, k.KeyID())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "SECRETVALUE") || (tc.target != nil && !errors.Is(err, tc.target)) {
				t.Fatalf("PrivateKeyFromEnv(%s) = %v; want an error containing %q (wrapping %v) without the content", tc.variable, err, tc.wantErr, tc.target)
			}
		})
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dist", "throwaway-index.key")
	k, created, err := LoadOrCreateKey(file)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateKey of no file = %v, %v, %v; want a new key", k, created, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, %v; want 0600", file, fi.Mode().Perm(), err)
	}
	again, created, err := LoadOrCreateKey(file)
	if err != nil || created || again.KeyID() != k.KeyID() {
		t.Errorf("LoadOrCreateKey of the written file = %v, %v, %v; want the same key %s, not created", again, created, err, k.KeyID())
	}
}

func TestLoadSigners(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, n := range []string{"a", "b"} {
		k, err := GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteKeyPair(filepath.Join(dir, n), k); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(dir, n+".key"))
	}
	s, err := LoadSigners(files, nil)
	if err != nil || len(s) != 2 || s[0].KeyID() == s[1].KeyID() {
		t.Fatalf("LoadSigners = %v, %v; want two distinct signers", s, err)
	}
	if _, err := LoadSigners(append(files, filepath.Join(dir, "c.key")), nil); err == nil || !strings.Contains(err.Error(), "c.key") {
		t.Errorf("LoadSigners with a missing file = %v; want an error naming it", err)
	}
}
