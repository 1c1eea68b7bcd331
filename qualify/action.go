package qualify

import (
	"cmp"
	"context"
	"io"
	"os"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// Test is the action of kbuild test: it reads and verifies the published
// index, then either lists the builds no evidence covers or qualifies one
// target and writes the result where Output says.
type Test struct {
	// Index names the published index (a site directory, index.yaml or
	// URL; siteread.ReadIndex), verified with Trust; Timeout bounds
	// reading it.
	Index   string
	Trust   *trust.Trust
	Timeout time.Duration
	// Untested, when set, is an evidence directory: Run lists the index's
	// builds with no evidence there (Untested) and qualifies nothing.
	Untested string
	// Qualification is what is qualified; Run sets its Index and Log.
	Qualification Qualification
	// LogFile receives the full log ("": none).
	LogFile string
	// Output is where the result goes; Run sets its Index. When it names
	// an Evidence file, Root is the root.yaml whose qa role must hold
	// Output.Signers, checked before anything is read.
	Output Output
	Root   string
	// Stdout and Stderr receive the result's lines (Output.Write).
	Stdout, Stderr io.Writer
}

// TestResult is what a Test found: the untested builds, or the
// qualification's result (nil when it did not run).
type TestResult struct {
	Untested []evidence.Target
	Result   *Result
}

// Run checks the evidence signers against Root, reads and verifies the
// index, and then lists what is untested or qualifies the target and
// writes its result. Untested builds are returned also with an error
// reading the evidence directory; the result is never nil.
func (a *Test) Run(ctx context.Context) (*TestResult, error) {
	if a.Output.Evidence != "" && a.Untested == "" {
		root, err := siteread.ReadRootFile(a.Root)
		if err != nil {
			return &TestResult{}, err
		}
		if _, _, err := evidence.CheckQASigners(root, a.Root, a.Output.Signers); err != nil {
			return &TestResult{}, err
		}
	}
	pub, err := siteread.ReadIndex(ctx, a.Index, a.Trust, siteread.WithTimeout(a.Timeout))
	if err != nil {
		return &TestResult{}, err
	}
	if a.Untested != "" {
		ts, err := Untested(pub.Verified.Index, a.Untested)
		return &TestResult{Untested: ts}, err
	}
	q := a.Qualification
	q.Index = pub.Verified.Index
	lf, err := os.Create(cmp.Or(a.LogFile, os.DevNull))
	if err != nil {
		return &TestResult{}, err
	}
	defer lf.Close()
	q.Log = lf
	res, err := q.Run(ctx)
	if err != nil {
		return &TestResult{}, err
	}
	out := a.Output
	out.Index = pub.Verified.Index
	return &TestResult{Result: res}, out.Write(res, q.Target, a.Stdout, a.Stderr)
}
