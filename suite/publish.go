package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// Publish is the action of kbuild publish: one publish of a recipes
// directory into a site, with or without suites, with the repository's
// new evidence. Fill it and call Run; the zero value of each optional
// field is its default.
type Publish struct {
	// Site is the site directory (what Pages serves).
	Site string
	// SuitesFile is the suites file; when it exists, new builds go into
	// Site/<first suite>/ and the other suites' holdings are shown on its
	// pages.
	SuitesFile string
	// EvidenceDir holds the repository's test evidence: each file the site
	// lacks is verified against Root's qa role before anything is built.
	EvidenceDir string
	// Root is the root.yaml published beside the index ("" for none); new
	// evidence needs it.
	Root string
	// Signers sign the index and the provenance (at least one).
	Signers []trust.Signer
	// Merge is the published index to merge over ("" for the index in the
	// site), verified with MergeTrust; AllowNew lets a missing one start a
	// new repository.
	Merge      string
	MergeTrust *trust.Trust
	AllowNew   bool
	// Title is the catalog's title ("" for the default).
	Title string
	// Rebuild rebuilds published versions too; their digests must not
	// change.
	Rebuild bool
	// ScanReport is a kbuild scan report file, published as scan.json (""
	// for none).
	ScanReport string
	// Generated is the new index's generated time, and the time evidence
	// is attached at.
	Generated time.Time
	// Timeout bounds each HTTP request for the published index and the
	// registry.
	Timeout time.Duration
	// PlainHTTP allows plain HTTP to loopback registries, for the
	// evidence's referrers and the publisher's (publish.WithPlainHTTP).
	PlainHTTP bool
	// Options are the publisher's other options (builder, expiry, output,
	// provenance, report …); Run adds the site, signers, root, title,
	// rebuild, scan report, merge, generated time, timeout and suites.
	Options []publish.Option
	// Now is the time the published index and the evidence are checked
	// at (default: the clock).
	Now time.Time
	// Stderr gets progress: the suite published into and the evidence
	// verified (default: discarded).
	Stderr io.Writer
}

// PublishResult is what one Publish wrote.
type PublishResult struct {
	// Suite is the suite published into, "" without a suites file.
	Suite string
	// Published is the index written and signed.
	Published *publish.Result
	// Mirror is what was copied to the site root (rootSuite), nil if
	// nothing; RootSuite names the suite.
	Mirror    *publish.MirrorResult
	RootSuite string
	// Attached are the references evidence was attached to, Evidence the
	// files written into SITE/evidence/.
	Attached []string
	Evidence []*Incoming
	// Compat are the compatibility matrices written (with Root), with a
	// suites file or without.
	Compat []string
}

// Run publishes recipesDir, in this order: the suites file is read and
// the other suites' holdings with it; the new evidence is verified
// against the root's qa role and the published index (nothing is built
// when one file does not verify); the publisher builds, pushes, signs and
// writes the suite's site; the first suite is copied to the site root
// when the suites file says so; and last the evidence is attached to its
// charts and copied into the site, and the compatibility matrices
// written from the site's evidence (with Root; of the suites' indexes,
// or of the one at the site root without a suites file). The result holds what was done also
// when a later step fails.
func (a *Publish) Run(ctx context.Context, recipesDir string) (*PublishResult, error) {
	stderr := a.stderr()
	if a.Now.IsZero() {
		a.Now = time.Now()
	}
	res := &PublishResult{}
	siteDir := a.Site
	opts := append([]publish.Option{publish.WithSigners(a.Signers...), publish.WithRoot(a.Root),
		publish.WithTimeout(a.Timeout), publish.WithPlainHTTP(a.PlainHTTP), publish.WithTitle(a.Title), publish.WithRebuild(a.Rebuild),
		publish.WithScanReport(a.ScanReport)}, a.Options...)
	c, found, err := Load(a.SuitesFile)
	if err != nil {
		return nil, err
	}
	if found {
		res.Suite = c.First()
		siteDir = filepath.Join(a.Site, c.First())
		fmt.Fprintf(stderr, "%s: publishing into suite %s (%s)\n", a.SuitesFile, c.First(), siteDir)
		pages := &Pages{Site: a.Site, Config: c, Signers: a.Signers, Root: a.Root, Title: a.Title, Now: a.Now, Stderr: stderr}
		held, err := pages.Holdings(ctx, c.First())
		if err != nil {
			return nil, err
		}
		opts = append(opts, publish.WithSuites(held))
	}
	opts = append(opts, publish.WithSite(siteDir))
	ev, err := a.checkEvidence(ctx, siteDir)
	if err != nil {
		return nil, err
	}
	if a.Merge != "" {
		opts = append(opts, publish.WithMerge(a.Merge, a.MergeTrust, a.AllowNew))
	}
	opts = append(opts, publish.WithGenerated(a.Generated))
	p, err := publish.New(opts...)
	if err != nil {
		return nil, err
	}
	if res.Published, err = p.Publish(ctx, recipesDir); err != nil {
		return nil, err
	}
	if found {
		if res.Mirror, err = c.MirrorRoot(a.Site, a.Title); err != nil {
			return res, err
		}
		res.RootSuite = c.RootSuite
	}
	if ev != nil {
		res.Attached, err = InstallIncoming(ctx, ev.files, a.Site, ev.pub, a.Generated, a.PlainHTTP, a.Timeout)
		if err != nil {
			return res, fmt.Errorf("the index is published, but: %w", err)
		}
		res.Evidence = ev.files
	}
	if a.Root == "" {
		return res, nil
	}
	// The compatibility matrices: what the evidence says of each version,
	// of the suites' or, without a suites file, of the site's one index.
	pages := &Pages{Site: a.Site, Config: c, Signers: a.Signers, Root: a.Root, Title: a.Title, Now: time.Now(), Stderr: a.Stderr}
	compat, err := pages.WriteCompat(ctx, a.Root)
	if err != nil {
		return res, fmt.Errorf("the index is published, but the compatibility matrices were not written: %w", err)
	}
	res.Compat = compat.Matrices
	return res, nil
}

// incoming is the repository's new evidence, verified, and the published
// index it was verified against.
type incoming struct {
	files []*Incoming
	pub   *siteread.Published
}

// checkEvidence verifies the evidence files of EvidenceDir that the site
// lacks against Root's qa role and the published index (Merge, else the
// one in siteDir) before anything is built or written.
func (a *Publish) checkEvidence(ctx context.Context, siteDir string) (*incoming, error) {
	files, err := ScanIncoming(a.EvidenceDir, a.Site)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	if a.Root == "" {
		return nil, &needsRoot{fmt.Sprintf("%s holds %d new evidence file(s) (%s first): evidence counts only when signed by the root's qa role", a.EvidenceDir, len(files), files[0].Src)}
	}
	root, err := siteread.ReadRootFile(a.Root)
	if err != nil {
		return nil, err
	}
	ref, tr := siteDir, trust.SignedBy(a.Signers...)
	if a.Merge != "" {
		ref, tr = a.Merge, a.MergeTrust
	}
	pub, err := siteread.ReadIndexAt(ctx, ref, tr, a.Now, siteread.WithTimeout(a.Timeout))
	if err != nil {
		return nil, fmt.Errorf("evidence %s: the published index to verify it against: %w; nothing was published", files[0].Src, err)
	}
	if err := VerifyIncoming(files, root, pub.Verified.Index, a.Now); err != nil {
		return nil, err
	}
	fmt.Fprintf(a.stderr(), "%s: %d new evidence file(s) verified against the qa role of %s\n", a.EvidenceDir, len(files), a.Root)
	return &incoming{files: files, pub: pub}, nil
}

// ErrNeedsRoot is wrapped by the error of a Publish that has new
// evidence and no Root to verify it with.
var ErrNeedsRoot = errors.New("a root of trust is needed")

type needsRoot struct{ msg string }

func (e *needsRoot) Error() string { return e.msg }
func (e *needsRoot) Unwrap() error { return ErrNeedsRoot }

func (a *Publish) stderr() io.Writer {
	if a.Stderr == nil {
		return io.Discard
	}
	return a.Stderr
}
