package suite

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// WriteText writes what a publish wrote, signed (the keyids of
// signers), copied and attached, one line each; site is the site
// directory the evidence paths are under.
func (r *PublishResult) WriteText(w io.Writer, site string, signers []trust.Signer) error {
	if r.Published != nil {
		if err := r.Published.WriteText(w, signers); err != nil {
			return err
		}
	}
	if r.Mirror != nil {
		r.Mirror.WriteText(w, r.RootSuite)
	}
	for _, ref := range r.Attached {
		fmt.Fprintf(w, "attached evidence to %s\n", ref)
	}
	for _, e := range r.Evidence {
		fmt.Fprintf(w, "wrote %s: %s from %s (%s)\n", filepath.Join(site, filepath.FromSlash(e.Dest)), e.Verified.Target, e.Src, e.Digest)
	}
	for _, file := range r.Compat {
		fmt.Fprintf(w, "wrote %s\n", file)
	}
	return nil
}

// WriteText writes what a withdrawal changed, suite by suite: the
// tombstone, what kubepkg clusters running the build do now, and the
// index signed by signers.
func (r *WithdrawResult) WriteText(w io.Writer, signers []trust.Signer) error {
	for _, wd := range r.Indexes {
		if wd.Withdrawal == nil {
			fmt.Fprintf(w, "suite %s does not hold %s@%s build %d\n", wd.Suite, r.Package, r.Version, r.Build)
			continue
		}
		fmt.Fprintf(w, "withdrew %s (digest %s): %s\n", wd.Withdrawal, wd.Withdrawal.Digest, wd.Withdrawal.Reason)
		for _, fl := range wd.Followers {
			if fl.To == nil {
				fmt.Fprintf(w, "kubepkg clusters running it with spec.version %q keep running it: no build left meets %s, and fresh installs of %s find none\n", fl.Constraint, fl.Constraint, fl.Constraint)
				continue
			}
			fmt.Fprintf(w, "kubepkg clusters running it with spec.version %q move to %s %s build %d\n", fl.Constraint, r.Package, fl.To.Version, fl.To.Build)
		}
		if err := wd.Index.WriteText(w, signers); err != nil {
			return err
		}
	}
	if r.Mirror != nil {
		return r.Mirror.WriteText(w, r.RootSuite)
	}
	return nil
}

// WriteText writes what a promotion did: the evidence that counted (on
// w) and did not (on warn), the versions copied and the index signed
// under site, the pages and matrices rewritten.
func (o *Outcome) WriteText(w, warn io.Writer, site string, target evidence.Target) error {
	for _, v := range o.Evidence {
		fmt.Fprintf(w, "evidence: %s on %s, signed by %d qa key(s)\n", v.Result, evidence.EnvString(v.Env), len(v.SignedBy))
	}
	for _, r := range o.Refused {
		fmt.Fprintf(warn, "warning: evidence did not count: %s\n", r)
	}
	for _, wd := range o.Withdrawn {
		fmt.Fprintf(w, "withdrawn in %s as in %s: %s\n", o.To, o.From, wd)
	}
	fmt.Fprintf(w, "promoted %s from %s to %s: %d version(s) copied; signed %s: %d packages, %d versions\n",
		target, o.From, o.To, len(o.Copied), filepath.Join(site, o.To, sitelayout.IndexFile), o.Packages, o.Versions)
	for _, s := range o.Refreshed {
		fmt.Fprintf(w, "rewrote the pages of suite %s\n", s)
	}
	for _, file := range o.Matrices {
		fmt.Fprintf(w, "wrote %s\n", file)
	}
	return nil
}

// WriteText writes the evidence written (its target, result,
// environment, subjects, index and expiry) and where it was attached.
func (r *AttestResult) WriteText(w io.Writer, target evidence.Target, result string) error {
	st := r.Statement
	fmt.Fprintf(w, "%s: %s %s on %s, %d subjects from %s, expires %s\n", r.File, target, result,
		evidence.EnvString(st.Predicate.Configuration[0].Annotations), r.Subjects, r.Index, st.Predicate.Configuration[1].Annotations["expires"])
	for _, ref := range r.Attached {
		fmt.Fprintf(w, "attached to %s\n", ref)
	}
	return nil
}

// WriteFollowed writes what FollowSite did, suite by suite: a suite
// without an index, each chart copied and deleted, and the counts.
func WriteFollowed(w io.Writer, out []SuiteFollowed) error {
	for _, s := range out {
		switch {
		case s.NoIndex:
			fmt.Fprintf(w, "%s: no index yet; nothing to follow\n", s.Suite)
		case s.FollowResult != nil:
			for _, r := range s.Copied {
				fmt.Fprintf(w, "%s: copied %s\n", s.Suite, r)
			}
			for _, r := range s.Removed {
				fmt.Fprintf(w, "%s: deleted %s (not in the suite)\n", s.Suite, r)
			}
			fmt.Fprintf(w, "%s: %d copied, %d deleted, %d already in place\n", s.Suite, len(s.Copied), len(s.Removed), s.Kept)
		}
	}
	return nil
}

// WriteChecks writes, on notes, the index's warnings and, with charts,
// each chart that does not match its pin and the count; it returns
// false when a chart did not match.
func (r *VerifyResult) WriteChecks(notes io.Writer, charts bool) bool {
	for _, w := range r.Verified.Warnings {
		fmt.Fprintf(notes, "warning: %s\n", w)
	}
	if !charts {
		return true
	}
	for _, m := range r.Mismatches {
		fmt.Fprintf(notes, "refused: %v\n", m)
	}
	if len(r.Mismatches) > 0 {
		fmt.Fprintf(notes, "%d of %d charts do not match their pins\n", len(r.Mismatches), r.Charts)
		return false
	}
	fmt.Fprintf(notes, "%d charts match their pinned digests\n", r.Charts)
	return true
}

// WriteText writes, with evidence (the directory checked, "" for none),
// each evidence file refused (on notes) and the counts, then the index
// verified and its root with when they expire from now. It returns false,
// having written no more, when evidence was refused.
func (r *VerifyResult) WriteText(w, notes io.Writer, evidence string, now time.Time) bool {
	if evidence != "" {
		for _, ref := range r.Refused {
			fmt.Fprintf(notes, "refused: %s\n", ref)
		}
		fmt.Fprintf(w, "%s: %d verified, %d refused, %d for versions this index does not hold\n", evidence, len(r.Evidence), len(r.Refused), r.Skipped)
		if len(r.Refused) > 0 {
			return false
		}
	}
	v := r.Verified
	fmt.Fprintf(w, "%s: %d packages, %d versions, signed by %d of %d, %s\n",
		r.IndexName, v.Packages, v.Versions, len(v.SignedBy), v.Keys, expiresIn(v.Expires, now))
	if v.Root != nil {
		fmt.Fprintf(w, "root.yaml: version %d, %s\n", v.Root.Signed.Version, expiresIn(v.Root.Signed.Expires, now))
	}
	return true
}

// expiresIn says when t is, from now: "expires in 29 days".
func expiresIn(t, now time.Time) string {
	if t.IsZero() {
		return "no expiry"
	}
	d := t.Sub(now)
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("expires in %d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("expires in %d hours", int(d/time.Hour))
	default:
		return fmt.Sprintf("expires in %d minutes", int(d/time.Minute))
	}
}
