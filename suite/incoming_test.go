package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/stacktest"
)

// TestIncoming: evidence committed to a repository's evidence/ is taken
// into the site only when it verifies; each refusal names the file and
// says why. A file the site holds already is not checked again.
func TestIncoming(t *testing.T) {
	r := newRepo(t, all...)
	late := gen.AddDate(0, 1, 0)
	env := "kubernetes=1.33,arch=amd64"
	pulp := evidence.Target{Package: "pulp", Version: "3.73.0", Build: 1}
	other := stacktest.Index(t, "pulp-3.73.0-1")
	other.Packages["pulp"].Versions[0].Spec.Variants[0].Components[0].Chart.Digest = "sha256:" + strings.Repeat("ab", 32)
	pulp9 := evidence.Target{Package: "pulp", Version: "3.73.0", Build: 9}
	unpublished := stacktest.Index(t, "pulp-3.73.0-1")
	unpublished.Packages["pulp"].Versions[0].Build, unpublished.Packages["pulp"].Versions[0].Spec.Build = 9, 9
	good := r.envelope(r.x, foreman, evidence.Pass, env, late, r.qa)
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		now   time.Time
		want  string
	}{
		{"signed outside the qa role", map[string][]byte{"a.intoto.json": r.envelope(r.x, foreman, evidence.Pass, env, late, r.idx)}, gen,
			"a.intoto.json: evidence refused: signed by 0 of the qa role's keys in root version 1"},
		{"other digests", map[string][]byte{"pulp/x.intoto.json": r.envelope(other, pulp, evidence.Pass, env, late, r.qa)}, gen,
			"pulp/x.intoto.json: evidence refused: the evidence for pulp 3.73.0 build 1 is not about what the index pins: subject oci://registry.example/pulp/pulp:3.73.0-1: the evidence has sha256:abab"},
		{"expired", map[string][]byte{"old.intoto.json": r.envelope(r.x, foreman, evidence.Pass, env, gen.Add(time.Minute), r.qa)}, gen.Add(time.Hour),
			"old.intoto.json: evidence refused: the evidence for foreman 3.15.0 build 1 on arch=amd64,kubernetes=1.33 expired on 2026-11-02T00:01:00Z"},
		{"not published", map[string][]byte{"pulp9.intoto.json": r.envelope(unpublished, pulp9, evidence.Pass, env, late, r.qa)}, gen,
			"pulp9.intoto.json: evidence refused: pulp 3.73.0 build 9 is not in the index"},
		{"two of one environment", map[string][]byte{"1.intoto.json": good, "2.intoto.json": r.envelope(r.x, foreman, evidence.Fail, env, late, r.qa)}, gen,
			"are both of foreman 3.15.0 build 1 on arch=amd64,kubernetes=1.33; keep one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), data, 0o644)
			}
			in, err := ScanIncoming(dir, r.site)
			if err != nil {
				t.Fatal(err)
			}
			if len(in) != len(tc.files) {
				t.Fatalf("ScanIncoming found %d files, want %d", len(in), len(tc.files))
			}
			err = VerifyIncoming(in, r.root, r.x, tc.now)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("VerifyIncoming = %v\nwant %q", err, tc.want)
			}
		})
	}

	// A good file: named by what it verified to be; once in the site it
	// is not taken again, even after it expired.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "foreman.intoto.json"), good, 0o644)
	in, err := ScanIncoming(dir, r.site)
	if err != nil || len(in) != 1 {
		t.Fatalf("ScanIncoming = %d files, %v", len(in), err)
	}
	if err := VerifyIncoming(in, r.root, r.x, gen); err != nil {
		t.Fatal(err)
	}
	if want := "evidence/foreman-3.15.0-1/arch=amd64,kubernetes=1.33.intoto.json"; in[0].Dest != want {
		t.Errorf("Dest = %s, want %s", in[0].Dest, want)
	}
	os.MkdirAll(filepath.Join(r.site, "evidence", "foreman-3.15.0-1"), 0o755)
	os.WriteFile(filepath.Join(r.site, filepath.FromSlash(in[0].Dest)), good, 0o644)
	if in, err := ScanIncoming(dir, r.site); err != nil || len(in) != 0 {
		t.Errorf("ScanIncoming of a published file = %d files, %v; want none", len(in), err)
	}
	// A symbolic link is refused; a missing directory holds nothing.
	os.Symlink("/etc/passwd", filepath.Join(dir, "link.intoto.json"))
	if _, err := ScanIncoming(dir, r.site); err == nil || !strings.Contains(err.Error(), "link.intoto.json: not a regular file") {
		t.Errorf("ScanIncoming with a link = %v", err)
	}
	if in, err := ScanIncoming(filepath.Join(dir, "none"), r.site); err != nil || in != nil {
		t.Errorf("ScanIncoming of no directory = %v, %v", in, err)
	}
}
