package qualify

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/evidence"
)

// TestParseFrom reads --from VERSION+build.M and refuses other forms.
func TestParseFrom(t *testing.T) {
	got, err := ParseFrom("shop", "v1.2.0+build.3")
	if err != nil || got != (evidence.Target{Package: "shop", Version: "1.2.0", Build: 3}) {
		t.Errorf(`ParseFrom("shop", "v1.2.0+build.3") = %+v, %v; want shop 1.2.0 build 3`, got, err)
	}
	for _, bad := range []string{"1.2.0", "1.2.0+build.0", "1.2.0+build.x", "+build.1"} {
		if _, err := ParseFrom("shop", bad); err == nil {
			t.Errorf("ParseFrom(%q) = nil error, want one", bad)
		}
	}
}

// TestOutputWrite: one line per phase, each failure on stderr (with a
// workflow annotation under GitHub), the JUnit file, the summary
// appended, and the verdict last.
func TestOutputWrite(t *testing.T) {
	dir := t.TempDir()
	target := evidence.Target{Package: "shop", Version: "1.1.0", Build: 1}
	res := &Result{LogDigest: "sha256:ab", Phases: []Phase{
		{Name: PhaseResolve, Detail: "shop"},
		{Name: PhaseInstall, Detail: "shop", Err: errors.New("not ready:\nDeployment shop")},
		{Name: PhaseUpgrade, Skipped: "no build before"},
	}}
	summary := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(summary, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &Output{JUnit: filepath.Join(dir, "junit.xml"), Summary: summary, GitHub: true}
	var stdout, stderr bytes.Buffer
	if err := o.Write(res, target, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	want := []string{"ok   resolve shop (0s)", "FAIL install shop (0s)", "skip upgrade  (0s)", "shop 1.1.0 build 1: fail (log sha256:ab)"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), strings.Join(want, "\n"))
	}
	if !strings.Contains(stderr.String(), "install shop: not ready:") || !strings.Contains(stderr.String(), "::error title=kbuild test shop 1.1.0 build 1::install shop: not ready:%0ADeployment shop") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	junit, err := os.ReadFile(o.JUnit)
	if err != nil || !strings.Contains(string(junit), `failures="1"`) {
		t.Errorf("JUnit %s: %v\n%s", o.JUnit, err, junit)
	}
	md, err := os.ReadFile(summary)
	if err != nil || !strings.HasPrefix(string(md), "before\n") || !strings.Contains(string(md), "kbuild test shop 1.1.0 build 1: fail") {
		t.Errorf("summary %s: %v\n%s", summary, err, md)
	}
}
