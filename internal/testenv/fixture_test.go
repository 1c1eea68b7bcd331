package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// endingTB records how a test ended: Fatalf and Skipf stop it, as the
// real ones do, by a panic the caller recovers.
type endingTB struct {
	testing.TB
	fatal, skip string
}

type ended struct{}

func (e *endingTB) Helper()      {}
func (e *endingTB) Name() string { return "TestNeedsFixture" }
func (e *endingTB) Fatalf(format string, args ...any) {
	e.fatal = fmt.Sprintf(format, args...)
	panic(ended{})
}
func (e *endingTB) Skipf(format string, args ...any) {
	e.skip = fmt.Sprintf(format, args...)
	panic(ended{})
}

func endWithMissing(tb *endingTB, path string) {
	defer func() { _ = recover() }()
	MissingFixture(tb, path)
}

// TestMissingFixture: an absent fixture fails the test under CI (CI=true,
// which always has ../shared) and skips it elsewhere, naming it in
// $KBUILD_TEST_OUTPUT/skipped-fixtures.txt for the test command's summary.
func TestMissingFixture(t *testing.T) {
	out := t.TempDir()
	t.Setenv("KBUILD_TEST_OUTPUT", out)
	list := filepath.Join(out, "skipped-fixtures.txt")

	t.Setenv("CI", "true")
	ci := &endingTB{TB: t}
	endWithMissing(ci, "../shared/x")
	if ci.fatal == "" || ci.skip != "" || !strings.Contains(ci.fatal, "../shared/x") {
		t.Errorf("under CI: fatal %q, skip %q; want a failure naming the fixture", ci.fatal, ci.skip)
	}
	if _, err := os.Stat(list); !os.IsNotExist(err) {
		t.Errorf("under CI the test was listed as skipped (%v)", err)
	}

	t.Setenv("CI", "")
	local := &endingTB{TB: t}
	endWithMissing(local, "../shared/x")
	if local.fatal != "" || local.skip == "" {
		t.Errorf("outside CI: fatal %q, skip %q; want a skip", local.fatal, local.skip)
	}
	data, err := os.ReadFile(list)
	if err != nil || string(data) != "TestNeedsFixture (needs ../shared/x)\n" {
		t.Errorf("skipped-fixtures.txt = %q, %v; want the test named with what it needs", data, err)
	}
}
