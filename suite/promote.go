package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// Promotion is one promotion: Target into suite To of the site.
type Promotion struct {
	// Site holds <suite>/index.yaml for every suite and evidence/.
	Site string
	// Config is the suites; when it is nil, Promote reads SuitesFile,
	// which must exist.
	Config     *Config
	SuitesFile string
	// To is the suite promoted into; Target the version or release set
	// promoted.
	To     string
	Target evidence.Target
	// Root is the repository's root of trust (root.yaml, with root/N.yaml
	// beside it); it must have a qa role.
	Root string
	// Signers sign the suite's index: they must meet the root's index
	// role.
	Signers []trust.Signer
	// Generated is the new index's generated time; Expires how long it
	// holds (0: publish's default).
	Generated time.Time
	Expires   time.Duration
	// Now is the time evidence and indexes are checked at (default: the
	// clock).
	Now time.Time
	// AllowNew lets the promotion start suite To's index when the site
	// has none: only for its first promotion (a site that was not restored
	// would otherwise lose what the suite published).
	AllowNew bool
	// Title is the catalogs' title (publish's --title).
	Title string
	// Stderr gets warnings.
	Stderr io.Writer
}

// Outcome is what a promotion did.
type Outcome struct {
	From, To string
	// Evidence is what counted; Refused is the evidence files that did
	// not, each with why.
	Evidence []*evidence.Verified
	Refused  []string
	*publish.CopyResult
	// Refreshed are the other suites whose package pages were rewritten,
	// since they say which suites hold each build.
	Refreshed []string
	// Matrices are the compatibility matrices written last, from the
	// evidence and the suites as they now are (Pages.WriteCompat).
	Matrices []string
}

// ErrRefused is wrapped by every refusal to promote.
var ErrRefused = fault.New(fault.Refused, "promotion refused")

// ErrNoEvidence is wrapped by Promote's refusal of a target without any
// evidence under the site's evidence/: run its tests and attest them.
var ErrNoEvidence = errors.New("no evidence")

// ErrNoSuiteIndex is wrapped by Promote's refusal when the suite promoted
// into has no index and AllowNew is not set: allow a new index for the
// suite's first promotion, otherwise restore the published site first.
var ErrNoSuiteIndex = errors.New("the suite has no index yet")

// ErrCompat is wrapped by Promote's error when the promotion is signed
// and written but the compatibility matrices are not: the Outcome says
// what was promoted.
var ErrCompat = errors.New("the compatibility matrices were not written")

// Promote copies Target (a version, or a release set with its members)
// from the suite before To into To, when the evidence under the site's
// evidence/ meets To's policy (of Config, or of SuitesFile). The previous
// suite's index is read as a subscriber reads it, from root version 1
// through the chain published beside it; evidence is verified against its
// newest root's qa role and its entries; the copy is publish.Copy's; then
// the pages of the other suites are rewritten and, last, the compatibility
// matrices. Nothing is written on refusal.
func Promote(ctx context.Context, pr Promotion) (*Outcome, error) {
	if pr.Now.IsZero() {
		pr.Now = time.Now()
	}
	if pr.Config == nil {
		c, found, err := Load(pr.SuitesFile)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("%s not found: a repository without suites publishes one index, and there is nothing to promote into", pr.SuitesFile)
		}
		pr.Config = c
	}
	c := pr.Config
	i := c.Index(pr.To)
	switch {
	case i < 0:
		return nil, fmt.Errorf("%w: suite %q is not in %s (suites: %s)", ErrRefused, pr.To, File, strings.Join(c.Names(), ", "))
	case i == 0:
		return nil, fmt.Errorf("%w: %s is the first suite: publish puts new builds there, and promote moves them on to %s", ErrRefused, pr.To, strings.Join(c.Names()[1:], ", then "))
	}
	from, policy := c.Suites[i-1].Name, c.Suites[i].Policy
	out := &Outcome{From: from, To: pr.To}
	root, _, err := publish.LoadRoot(pr.Root, pr.Signers)
	if err != nil {
		return nil, err
	}
	if _, _, ok := root.RoleKeys(trust.RoleQA); !ok {
		return nil, fmt.Errorf("%w: root %s (version %d) %w, so no evidence can count for %s (%s)",
			ErrRefused, pr.Root, root.Signed.Version, evidence.ErrNoQARole, pr.To, policy)
	}
	first, err := firstRoot(root, pr.Root)
	if err != nil {
		return nil, err
	}
	src, err := siteread.ReadIndexAt(ctx, filepath.Join(pr.Site, from), &trust.Trust{TrustedRoot: first}, pr.Now)
	if errors.Is(err, siteread.ErrNotFound) {
		return nil, fmt.Errorf("%w: suite %s has no index yet; versions enter %s only from %s, so promote into %s first: %w", ErrRefused, from, pr.To, from, from, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: suite %s: %w", ErrRefused, from, err)
	}
	x, reached := src.Verified.Index, src.Verified.Root
	want, _ := root.Digest()
	if got, _ := reached.Digest(); got != want {
		return nil, fmt.Errorf("%w: suite %s is signed under root version %d, but the root is version %d (%s): one root of trust holds every suite; publish %s with it first",
			ErrRefused, from, reached.Signed.Version, root.Signed.Version, pr.Root, from)
	}
	t := pr.Target
	if w := x.FindWithdrawn(t.Package, t.Version, t.Build); w != nil {
		return nil, fmt.Errorf("%w: %s was withdrawn in %s (%s); withdrawn versions stay withdrawn in every suite", ErrRefused, t, from, w.Reason)
	}
	if x.Find(t.Package, t.Version, t.Build) == nil {
		return nil, fmt.Errorf("%w: %s is not in suite %s; a version enters %s only from %s", ErrRefused, t, from, pr.To, from)
	}
	refs, err := Versions(x, t)
	if err != nil {
		return nil, fmt.Errorf("%w: in suite %s: %w", ErrRefused, from, err)
	}
	files, err := evidenceFiles(pr.Site, t)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %w for %s under %s; %s needs evidence (%s)",
			ErrRefused, ErrNoEvidence, t, filepath.Join(pr.Site, filepath.Dir(filepath.FromSlash(sitelayout.EvidenceFile(t.Package, t.Version, t.Build, "x")))), pr.To, policy)
	}
	for _, f := range files {
		data, err := siteread.ReadFile(f, trust.MaxEnvelopeSize)
		if err != nil {
			return nil, err
		}
		v, err := evidence.Verify(data, reached, x, pr.Now)
		siteread.Release(data)
		switch {
		case err != nil:
			out.Refused = append(out.Refused, fmt.Sprintf("%s: %v", f, err))
		case v.Target != t:
			out.Refused = append(out.Refused, fmt.Sprintf("%s: it is evidence for %s, filed under %s", f, v.Target, t))
		default:
			out.Evidence = append(out.Evidence, v)
		}
	}
	if err := policy.Evaluate(t, out.Evidence); err != nil {
		msg := fmt.Sprintf("%v: %v", ErrRefused, err)
		if len(out.Refused) > 0 {
			msg += fmt.Sprintf("; %d evidence file(s) did not count: %s", len(out.Refused), strings.Join(out.Refused, "; "))
		}
		return out, &refusal{msg: msg}
	}
	toIndex := filepath.Join(pr.Site, pr.To, sitelayout.IndexFile)
	if _, err := os.Stat(toIndex); errors.Is(err, os.ErrNotExist) && !pr.AllowNew {
		return out, fmt.Errorf("%w: %s does not exist: %w", ErrRefused, toIndex, ErrNoSuiteIndex)
	}
	// What To holds now, verified (an expired index too: re-signing it
	// is how its expiry is renewed), for the sets it would still resolve.
	var held0 *index.RepositoryIndex
	toSite, err := siteread.Open(filepath.Join(pr.Site, pr.To))
	if err != nil {
		return out, err
	}
	if cur, err := toSite.Verify(ctx, &trust.Trust{TrustedRoot: first}, trust.VerifyOptions{Now: pr.Now, AllowExpired: true}); err == nil {
		held0 = cur.Index
	} else if !errors.Is(err, siteread.ErrNotFound) {
		return out, fmt.Errorf("%w: suite %s: %w", ErrRefused, pr.To, err)
	}
	if err := checkSetsFollow(pr.To, held0, x, refs); err != nil {
		return out, err
	}
	pages := &Pages{Site: pr.Site, Config: c, Signers: pr.Signers, Root: pr.Root, Title: pr.Title, Now: pr.Now, Stderr: pr.Stderr}
	held, err := pages.Holdings(ctx, pr.To)
	if err != nil {
		return nil, err
	}
	opts := append(pages.options(filepath.Join(pr.Site, pr.To), held), publish.WithGenerated(pr.Generated))
	if pr.Expires > 0 {
		opts = append(opts, publish.WithExpires(pr.Expires))
	}
	p, err := publish.New(opts...)
	if err != nil {
		return nil, err
	}
	if out.CopyResult, err = p.Copy(ctx, src, refs); err != nil {
		return nil, fmt.Errorf("promoting %s into %s: %w", t, pr.To, err)
	}
	var changed []string
	for _, v := range append(slices.Clone(out.Copied), out.Withdrawn...) {
		changed = append(changed, v.Package)
	}
	if out.Refreshed, err = pages.Refresh(ctx, pr.To, changed); err != nil {
		return out, fmt.Errorf("%s is promoted into %s and its index signed, but the other suites' pages were not rewritten (run the promotion again): %w", t, pr.To, err)
	}
	compat, err := pages.WriteCompat(ctx, pr.Root)
	if err != nil {
		return out, fmt.Errorf("the promotion is signed, but %w: %w", ErrCompat, err)
	}
	out.Matrices = compat.Matrices
	return out, nil
}

// refusal is a policy refusal; it wraps ErrRefused.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return ErrRefused }

// evidenceFiles lists the evidence files of t in the site, sorted.
func evidenceFiles(site string, t evidence.Target) ([]string, error) {
	dir := filepath.Join(site, filepath.Dir(filepath.FromSlash(sitelayout.EvidenceFile(t.Package, t.Version, t.Build, "x"))))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".intoto.json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// WriteEvidence writes signed evidence of t in env into the site, where
// Promote reads it (sitelayout.EvidenceFile), through a temporary file and a
// rename; it returns the path.
func WriteEvidence(site string, t evidence.Target, env map[string]string, envelope []byte) (string, error) {
	norm := make(map[string]string, len(env))
	for k, v := range env {
		norm[k] = v
	}
	norm["kubernetes"] = evidence.KubernetesMinor(norm["kubernetes"])
	p := filepath.Join(site, filepath.FromSlash(sitelayout.EvidenceFile(t.Package, t.Version, t.Build, evidence.EnvString(norm))))
	return p, atomicfile.WriteFile(p, envelope, 0o644)
}

// VerifyEvidence verifies every evidence file under dir (a site's
// evidence/) whose version x holds, as Promote does, against root's qa
// role. It returns what was accepted, and each refused file with why;
// evidence for versions x does not hold is counted in skipped.
func VerifyEvidence(dir string, root *trust.Root, x *index.RepositoryIndex, now time.Time) (ok []*evidence.Verified, refused []string, skipped int, err error) {
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".intoto.json") {
			return err
		}
		data, err := siteread.ReadFile(p, trust.MaxEnvelopeSize)
		if err != nil {
			return err
		}
		defer siteread.Release(data)
		v, verr := evidence.Verify(data, root, x, now)
		switch {
		case errors.Is(verr, evidence.ErrNotInIndex):
			skipped++
		case verr != nil:
			refused = append(refused, fmt.Sprintf("%s: %v", p, verr))
		case filepath.Dir(p) != filepath.Join(dir, filepath.Base(filepath.Dir(filepath.FromSlash(sitelayout.EvidenceFile(v.Target.Package, v.Target.Version, v.Target.Build, "x"))))):
			refused = append(refused, fmt.Sprintf("%s: it is evidence for %s, filed elsewhere", p, v.Target))
		default:
			ok = append(ok, v)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, 0, fmt.Errorf("evidence directory %s: %w", dir, err)
	}
	return ok, refused, skipped, err
}

// Versions returns what t stands for in x: the version itself and, for a
// release set, every member (releaseset.Resolve's checks included).
func Versions(x *index.RepositoryIndex, t evidence.Target) ([]publish.VersionRef, error) {
	e := x.Find(t.Package, t.Version, t.Build)
	if e == nil {
		return nil, fmt.Errorf("%s is not in the index", t)
	}
	refs := []publish.VersionRef{{Package: t.Package, Version: t.Version, Build: t.Build}}
	if _, isSet, _ := releaseset.Members(&e.Spec); isSet {
		set, err := releaseset.Resolve(x, t.Package, t.Version, t.Build)
		if err != nil {
			return nil, err
		}
		for _, m := range set.Members {
			refs = append(refs, publish.VersionRef{Package: m.Package, Version: m.Version, Build: m.Build})
		}
	}
	return refs, nil
}
