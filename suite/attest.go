package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// Attest is the action of kbuild attest: QA's signed statement that one
// published version or release set passed or failed its tests in one
// environment, about exactly the digests the published index pins.
type Attest struct {
	// Target is the version or release set tested.
	Target evidence.Target
	// Result is evidence.Pass or evidence.Fail; Env the environment
	// tested; Log an http(s) URL of the run; Passed and Failed the tests.
	Result         string
	Env            map[string]string
	Log            string
	Passed, Failed []string
	// Signers are keys of the root's qa role.
	Signers []trust.Signer
	// Root is the root of trust file (with root/N.yaml beside it).
	Root string
	// Site is the site directory (or, with Out, the site's URL); Suite
	// and SuitesFile choose the index read (SiteDir).
	Site, Suite, SuitesFile string
	// Issued is the evidence's issue time; Expires how long it counts.
	Issued  time.Time
	Expires time.Duration
	// Out is the file the evidence is written to ("" for its place in the
	// site).
	Out string
	// Push also attaches the evidence to the charts in the registry
	// (PlainHTTP for loopback registries; Timeout for each request).
	Push      bool
	PlainHTTP bool
	Timeout   time.Duration
	// Now is the time the index is checked at (default: the clock).
	Now time.Time
	// Stderr gets warnings (default: discarded).
	Stderr io.Writer
}

// AttestResult is what Attest wrote.
type AttestResult struct {
	// File is where the evidence was written.
	File string
	// Statement is the evidence signed, Subjects how many charts and
	// images it is about, Index the index it was read from.
	Statement *evidence.Statement
	Subjects  int
	Index     string
	// Attached are the references the evidence was attached to (Push).
	Attached []string
}

// ErrSiteURL is wrapped by the error of an Attest with a site URL and no
// Out: evidence is written into a site directory or a file.
var ErrSiteURL = errors.New("evidence cannot be written into a site URL")

// Run checks the signers against the root's qa role (too few of them is
// a warning: the evidence counts once enough qa keys sign), reads and
// verifies the suite's index, signs the evidence about the digests it
// pins, writes it, and with Push attaches it to the charts last. The
// result holds what was done also when the push fails.
func (a *Attest) Run(ctx context.Context) (*AttestResult, error) {
	root, err := siteread.ReadRootFile(a.Root)
	if err != nil {
		return nil, err
	}
	n, need, err := evidence.CheckQASigners(root, a.Root, a.Signers)
	if err != nil {
		return nil, err
	}
	if n < need && a.Stderr != nil {
		fmt.Fprintf(a.Stderr, "warning: %d of the %d qa signatures the root needs; have another qa key holder sign too\n", n, need)
	}
	dir, err := SiteDir(a.Site, a.Suite, a.SuitesFile)
	if err != nil {
		return nil, err
	}
	now := a.Now
	if now.IsZero() {
		now = time.Now()
	}
	pub, err := siteread.ReadIndexAt(ctx, dir, &trust.Trust{TrustedRoot: root}, now)
	if err != nil {
		return nil, err
	}
	subjects, err := evidence.Subjects(pub.Verified.Index, a.Target)
	if err != nil {
		return nil, err
	}
	st, err := evidence.New(evidence.Attestation{Target: a.Target, Result: a.Result, Env: a.Env, Log: a.Log, Issued: a.Issued,
		Expires: a.Issued.Add(a.Expires), Passed: a.Passed, Failed: a.Failed}, subjects)
	if err != nil {
		return nil, err
	}
	envelope, err := evidence.Sign(st, a.Signers...)
	if err != nil {
		return nil, err
	}
	res := &AttestResult{File: a.Out, Statement: st, Subjects: len(subjects), Index: pub.Site.Location(pub.Site.IndexName())}
	if res.File == "" && (strings.HasPrefix(a.Site, "https://") || strings.HasPrefix(a.Site, "http://")) {
		return nil, fmt.Errorf("%s is a published site: %w", a.Site, ErrSiteURL)
	}
	if res.File == "" {
		res.File, err = WriteEvidence(a.Site, a.Target, a.Env, envelope)
	} else {
		err = atomicfile.WriteFile(res.File, envelope, 0o644)
	}
	if err != nil {
		return nil, err
	}
	if !a.Push {
		return res, nil
	}
	versions, err := Versions(pub.Verified.Index, a.Target)
	if err != nil {
		return res, err
	}
	refs, err := publish.AttachEvidence(ctx, pub, versions, envelope, a.Issued, a.PlainHTTP, a.Timeout)
	if err != nil {
		return res, fmt.Errorf("the evidence is written to %s, but: %w", res.File, err)
	}
	res.Attached = refs
	return res, nil
}
