package trust

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keyFiles writes a key pair for each name into dir and returns the
// prefixes (NAME.key, NAME.pub).
func keyFiles(t *testing.T, dir string, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		k, err := GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, n)
		if err := WriteKeyPair(p, k); err != nil {
			t.Fatal(err)
		}
		out[n] = p
	}
	return out
}

func intp(n int) *int { return &n }

func TestRootEditApply(t *testing.T) {
	k := keyFiles(t, t.TempDir(), "root", "index", "index2", "qa", "virt", "virt2")
	expires := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)
	var fresh RootConfig
	err := RootEdit{RootKeys: []string{k["root"] + ".key"}, RootThreshold: intp(1), IndexKeys: []string{k["index"] + ".pub"}, IndexThreshold: intp(1), Expires: expires,
		Delegate: []string{"team-virt=kubevirt*,cdi"}, DelegateKeys: []string{"team-virt=" + k["virt"] + ".pub"}}.Apply(&fresh, true)
	if err != nil {
		t.Fatalf("Apply to a new root: %v", err)
	}
	if _, err := NewRoot(fresh); err != nil {
		t.Fatalf("NewRoot of the edited config: %v", err)
	}
	d := fresh.Delegation("team-virt")
	if len(fresh.RootKeys) != 1 || len(fresh.IndexKeys) != 1 || !fresh.Expires.Equal(expires) || d == nil || strings.Join(d.Packages, ",") != "kubevirt*,cdi" || d.Threshold != 1 || len(d.Keys) != 1 {
		t.Fatalf("new root config = %+v", fresh)
	}

	for _, tc := range []struct {
		name    string
		edit    RootEdit
		check   func(t *testing.T, c RootConfig)
		wantErr string
		editErr bool
		// input and missing: the input the error names (its message starts
		// with it; a command names its flag) and the delegation it lacks.
		input, missing string
	}{
		{name: "renew keeps everything", edit: RootEdit{Expires: expires.Add(time.Hour)}, check: func(t *testing.T, c RootConfig) {
			if len(c.RootKeys) != 1 || len(c.IndexKeys) != 1 || len(c.Delegations) != 1 || !c.Expires.Equal(expires.Add(time.Hour)) || len(c.QAKeys) != 0 {
				t.Errorf("renewed config = %+v", c)
			}
		}},
		{name: "rotate the index key", edit: RootEdit{IndexKeys: []string{k["index2"] + ".pub"}, Expires: expires}, check: func(t *testing.T, c RootConfig) {
			if len(c.IndexKeys) != 1 || c.IndexKeys[0].KeyID() == fresh.IndexKeys[0].KeyID() {
				t.Errorf("index keys = %v, want the one new key", c.IndexKeys)
			}
		}},
		{name: "qa role gets threshold 1", edit: RootEdit{QAKeys: []string{k["qa"] + ".pub"}, Expires: expires}, check: func(t *testing.T, c RootConfig) {
			if len(c.QAKeys) != 1 || c.QAThreshold != 1 {
				t.Errorf("qa = %v threshold %d, want one key of threshold 1", c.QAKeys, c.QAThreshold)
			}
		}},
		{name: "delegation keys and threshold", edit: RootEdit{DelegateKeys: []string{"team-virt=" + k["virt"] + ".pub", "team-virt=" + k["virt2"] + ".key"}, DelegateThresholds: []string{"team-virt=2"}, Expires: expires},
			check: func(t *testing.T, c RootConfig) {
				if d := c.Delegation("team-virt"); d == nil || len(d.Keys) != 2 || d.Threshold != 2 {
					t.Errorf("team-virt = %+v, want two keys of threshold 2", d)
				}
			}},
		{name: "new patterns replace the old", edit: RootEdit{Delegate: []string{"team-virt=kubevirt"}, Expires: expires}, check: func(t *testing.T, c RootConfig) {
			if d := c.Delegation("team-virt"); d == nil || strings.Join(d.Packages, ",") != "kubevirt" || len(d.Keys) != 1 {
				t.Errorf("team-virt = %+v, want patterns [kubevirt] and its key kept", d)
			}
		}},
		{name: "undelegate", edit: RootEdit{Undelegate: []string{"team-virt"}, Expires: expires}, check: func(t *testing.T, c RootConfig) {
			if len(c.Delegations) != 0 {
				t.Errorf("delegations = %+v, want none", c.Delegations)
			}
		}},
		{name: "undelegate unknown", edit: RootEdit{Undelegate: []string{"team-db"}, Expires: expires}, wantErr: "undelegate team-db: the root has no such delegation", input: "undelegate"},
		{name: "malformed delegate", edit: RootEdit{Delegate: []string{"team-db"}, Expires: expires}, wantErr: `delegate "team-db": want NAME=PATTERN[,PATTERN]`, editErr: true, input: "delegate"},
		{name: "key of unknown delegation", edit: RootEdit{DelegateKeys: []string{"team-db=" + k["virt"] + ".pub"}, Expires: expires}, wantErr: "delegate-key team-db=…: no delegation team-db", editErr: true, input: "delegate-key", missing: "team-db"},
		{name: "threshold not a number", edit: RootEdit{DelegateThresholds: []string{"team-virt=two"}, Expires: expires}, wantErr: `delegate-threshold "team-virt=two": want NAME=N`, editErr: true, input: "delegate-threshold"},
		{name: "missing key file", edit: RootEdit{RootKeys: []string{"/nonexistent/root.pub"}, Expires: expires}, wantErr: "key /nonexistent/root.pub: "},
		{name: "no expiry", edit: RootEdit{}, wantErr: "a root must expire", editErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRoot(fresh)
			if err != nil {
				t.Fatal(err)
			}
			c, err := r.Config()
			if err != nil {
				t.Fatal(err)
			}
			err = tc.edit.Apply(&c, false)
			if tc.wantErr != "" {
				var ee *RootEditError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.As(err, &ee) != tc.editErr {
					t.Fatalf("Apply = %v, want an error containing %q (a *RootEditError: %v)", err, tc.wantErr, tc.editErr)
				}
				var ie *InputError
				input, missing := "", ""
				switch {
				case errors.As(err, &ee):
					input, missing = ee.Input, ee.Missing
				case errors.As(err, &ie):
					input = ie.Input
				}
				if input != tc.input || missing != tc.missing || (tc.input != "" && !strings.HasPrefix(err.Error(), tc.input+" ")) {
					t.Errorf("Apply = %v about input %q (delegation %q missing), want input %q starting the message (delegation %q missing)", err, input, missing, tc.input, tc.missing)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			tc.check(t, c)
			if _, err := r.Next(c); err != nil {
				t.Errorf("Next of the edited config: %v", err)
			}
		})
	}
}
