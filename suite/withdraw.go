package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// Withdraw is the action of kbuild repo withdraw: one published build
// taken out of the signed index for good — of the site's one index, or of
// every suite that holds it — as promote's counterpart (Promote).
type Withdraw struct {
	// Site is the site directory; SuitesFile the suites file (when it
	// exists, every suite under Site that holds the build is changed).
	Site, SuitesFile string
	// Package, Version (published spelling) and Build name the build;
	// Reason is shown in the catalog.
	Package, Version string
	Build            int
	Reason           string
	// Signers re-sign each index changed.
	Signers []trust.Signer
	// Generated is the new indexes' generated time; Expires how long
	// after it they expire.
	Generated time.Time
	Expires   time.Duration
	// Merge is the index to withdraw from instead of the site's, verified
	// with MergeTrust (not with suites); Timeout bounds its requests.
	Merge      string
	MergeTrust *trust.Trust
	Timeout    time.Duration
	// Now is the time the other suites' indexes are checked at for their
	// pages (default: the clock).
	Now time.Time
	// Stderr gets the publisher's warnings (default: discarded).
	Stderr io.Writer
}

// Withdrawn is one index a Withdraw looked at.
type Withdrawn struct {
	// Suite is "" without suites.
	Suite string
	// Withdrawal is the tombstone written, Index the index signed; both
	// nil for a suite whose index does not hold the build.
	Withdrawal *index.Withdrawal
	Index      *publish.Result
	// Followers are what kubepkg clusters running the build do now.
	Followers []releaseset.Follower
}

// WithdrawResult is what one Withdraw did, in order.
type WithdrawResult struct {
	// Package, Version and Build name the build withdrawn.
	Package, Version string
	Build            int
	// Indexes are the indexes looked at, in the suites' order: those
	// changed, and the suites' that did not hold the build.
	Indexes []Withdrawn
	// Mirror is what was copied to the site root (rootSuite), nil if
	// nothing; RootSuite names the suite.
	Mirror    *publish.MirrorResult
	RootSuite string
}

// ErrMergeWithSuites is the error of a Withdraw with Merge under a suites
// file: Merge names one index, and every suite is changed.
var ErrMergeWithSuites = errors.New("one index named, with every suite to change")

// Run withdraws the build: from Site's index without a suites file; with
// one, from every suite whose index holds it (none holding it is an
// error), then rewrites every suite's pages of the package and last copies
// the first suite to the site root when the suites file says so. The
// result holds what was done also when a later step fails; it is never
// nil.
func (a *Withdraw) Run(ctx context.Context) (*WithdrawResult, error) {
	res := &WithdrawResult{Package: a.Package, Version: a.Version, Build: a.Build}
	if err := index.CheckReason(a.Reason); err != nil {
		return res, &publish.InputError{Input: "reason", Err: err}
	}
	c, found, err := Load(a.SuitesFile)
	if err != nil {
		return res, err
	}
	if !found {
		w, err := a.withdraw(ctx, a.Site, "")
		if err != nil {
			return res, err
		}
		res.Indexes = append(res.Indexes, *w)
		return res, nil
	}
	if a.Merge != "" {
		return res, ErrMergeWithSuites
	}
	done := 0
	for _, s := range c.Names() {
		dir := filepath.Join(a.Site, s)
		if _, err := os.Stat(filepath.Join(dir, sitelayout.IndexFile)); err != nil {
			continue
		}
		w, err := a.withdraw(ctx, dir, s)
		if errors.Is(err, index.ErrNotPublished) {
			res.Indexes = append(res.Indexes, Withdrawn{Suite: s})
			continue
		}
		if err != nil {
			return res, fmt.Errorf("suite %s: %w", s, err)
		}
		res.Indexes = append(res.Indexes, *w)
		done++
	}
	if done == 0 {
		return res, fmt.Errorf("no suite of %s holds %s@%s build %d (suites: %s); nothing to withdraw", a.Site, a.Package, a.Version, a.Build, strings.Join(c.Names(), ", "))
	}
	// Every suite's page of the package says where the build is withdrawn.
	now := a.Now
	if now.IsZero() {
		now = time.Now()
	}
	pages := &Pages{Site: a.Site, Config: c, Signers: a.Signers, Now: now, Stderr: a.Stderr}
	if _, err := pages.Refresh(ctx, "", []string{a.Package}); err != nil {
		return res, fmt.Errorf("%s@%s build %d is withdrawn and the indexes signed, but the catalog pages were not all rewritten, and some may still show it held: %w", a.Package, a.Version, a.Build, err)
	}
	if res.Mirror, err = c.MirrorRoot(a.Site, ""); err != nil {
		return res, err
	}
	res.RootSuite = c.RootSuite
	return res, nil
}

// withdraw withdraws the build from the site in dir.
func (a *Withdraw) withdraw(ctx context.Context, dir, suite string) (*Withdrawn, error) {
	opts := []publish.Option{publish.WithSite(dir), publish.WithSigners(a.Signers...), publish.WithGenerated(a.Generated),
		publish.WithExpires(a.Expires), publish.WithTimeout(a.Timeout), publish.WithOutput(nil, a.Stderr)}
	if a.Merge != "" {
		opts = append(opts, publish.WithMerge(a.Merge, a.MergeTrust, false))
	}
	p, err := publish.New(opts...)
	if err != nil {
		return nil, err
	}
	w, res, err := p.Withdraw(ctx, a.Package, a.Version, a.Build, a.Reason)
	if err != nil {
		return nil, err
	}
	left := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}
	if res.Left != nil {
		left.Packages[a.Package] = res.Left
	}
	return &Withdrawn{Suite: suite, Withdrawal: w, Index: res, Followers: releaseset.AfterWithdrawal(left, a.Package, a.Version)}, nil
}
