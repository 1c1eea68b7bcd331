package qualify

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

var fromBuild = regexp.MustCompile(`^([0-9A-Za-z.-]+)\+build\.([1-9][0-9]{0,8})$`)

// ParseFrom reads VERSION+build.M, the build of pkg to upgrade from
// (kbuild test --from); "" is the zero Target, which lets the
// qualification pick it from the index (Qualification.From).
func ParseFrom(pkg, s string) (evidence.Target, error) {
	if s == "" {
		return evidence.Target{}, nil
	}
	m := fromBuild.FindStringSubmatch(s)
	if m == nil {
		return evidence.Target{}, fmt.Errorf("%q: want VERSION+build.M, e.g. 3.14.0+build.2", s)
	}
	build, _ := strconv.Atoi(m[2])
	return evidence.Target{Package: pkg, Version: spec.CanonicalVersion(m[1]), Build: build}, nil
}

// Output is where a result goes besides its lines: the JUnit file, the
// Markdown step summary and the signed evidence. An empty file name
// writes nothing of that kind.
type Output struct {
	// JUnit is the file the result is written to as JUnit XML.
	JUnit string
	// Summary is the file a Markdown summary is appended to.
	Summary string
	// Evidence is the file the signed evidence goes to; its subjects are
	// the digests Index pins, it is valid from Issued for Expires, signed
	// by Signers, and names LogURL.
	Evidence string
	Index    *index.RepositoryIndex
	Issued   time.Time
	Expires  time.Duration
	LogURL   string
	Signers  []trust.Signer
	// GitHub adds a workflow annotation on stderr for each failed phase.
	GitHub bool
}

// Write prints one line per phase on stdout (and each failure on
// stderr), writes the files o names, and prints the verdict last.
func (o *Output) Write(res *Result, target evidence.Target, stdout, stderr io.Writer) error {
	for _, p := range res.Phases {
		state := "ok  "
		switch {
		case p.Err != nil:
			state = "FAIL"
		case p.Skipped != "":
			state = "skip"
		}
		fmt.Fprintf(stdout, "%s %s %s (%s)\n", state, p.Name, p.Detail, p.Took.Round(time.Millisecond))
		if p.Err != nil {
			fmt.Fprintf(stderr, "%s %s: %v\n", p.Name, p.Detail, p.Err)
		}
		if p.Err != nil && o.GitHub {
			fmt.Fprintf(stderr, "::error title=kbuild test %s::%s %s: %s\n", target, p.Name, p.Detail, strings.ReplaceAll(p.Err.Error(), "\n", "%0A"))
		}
	}
	if o.JUnit != "" {
		var b strings.Builder
		if err := res.WriteJUnit(&b, target); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(o.JUnit, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if o.Summary != "" {
		sf, err := os.OpenFile(o.Summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		err = res.WriteMarkdown(sf, target)
		if cerr := sf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if o.Evidence != "" {
		envelope, err := res.Sign(o.Index, target, o.Issued, o.Issued.Add(o.Expires), o.LogURL, o.Signers...)
		if err != nil {
			return fmt.Errorf("signing the evidence: %w", err)
		}
		if err := atomicfile.WriteFile(o.Evidence, envelope, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s %s on %s\n", o.Evidence, target, res.Verdict(), evidence.EnvString(res.Env))
	}
	fmt.Fprintf(stdout, "%s: %s (log %s)\n", target, res.Verdict(), res.LogDigest)
	return nil
}
