package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/spec"
)

// DifferError says how a rebuild differs from what is published.
type DifferError struct{ Err error }

func (e *DifferError) Error() string { return e.Err.Error() }

// Unwrap returns the differences.
func (e *DifferError) Unwrap() error { return e.Err }

// ErrOtherKbuild means the version was built by another kbuild than the
// one rebuilding it, so different bytes would not say the recipe changed.
var ErrOtherKbuild = fault.New(fault.Refused, "built by another kbuild")

// ErrNoGitBase is wrapped by the error about a recipe directory outside a
// git work tree: Diff compares with a commit, so it needs another base.
var ErrNoGitBase = errors.New("no base to compare with")

// Kbuild says how the kbuild that rebuilds (the builder's, see
// builder.Builder.BuiltBy) is checked against the one that built each
// published version (its BuildInfo's builder and builderSum).
type Kbuild struct {
	// Published returns the BuildInfo a version was published with, nil
	// when the site has none (kubepkg built it).
	Published func(ctx context.Context, name, version string, build int) (*spec.BuildInfo, error)
	// AllowOther compares with a version another kbuild built instead of
	// refusing (ErrOtherKbuild).
	AllowOther bool
}

// builtBy returns which kbuild built name version build, "" when unknown,
// and ErrOtherKbuild when it is not the one b stamps its builds with
// (its ID and module hash, empty for a build from a checkout) and k does
// not allow that.
func (k Kbuild) builtBy(ctx context.Context, b *builder.Builder, name, version string, build int) (string, error) {
	if k.Published == nil {
		return "", nil
	}
	info, err := k.Published(ctx, name, version, build)
	if err != nil || info == nil || info.Builder == "" {
		return "", err
	}
	by := info.Builder
	if info.BuilderSum != "" {
		by += " (" + info.BuilderSum + ")"
	}
	id, sum := b.BuiltBy()
	same := info.Builder == id && (info.BuilderSum == "" || sum == "" || info.BuilderSum == sum)
	if same || k.AllowOther {
		return by, nil
	}
	this := id
	if sum != "" {
		this += " (" + sum + ")"
	}
	install := ""
	if rel, ok := strings.CutPrefix(info.Builder, "kbuild "); ok && strings.HasPrefix(rel, "v") {
		install = " (go install kbuild.dev/kbuild/cmd/kbuild@" + rel + ", or its release binary)"
	}
	return by, fmt.Errorf("%s %s build %d was %w, %s; this is %s, which may pack other bytes: rebuild with that kbuild%s",
		name, version, build, ErrOtherKbuild, by, this, install)
}

// Rebuild prepares the recipe in dir with b (which pushes nothing) and
// compares every chart archive digest and the spec digest with the
// published entry of the same name, version and build in idx. It returns
// what matched, a *DifferError saying what differs (for a chart archive
// that differs, the first file inside it, the published chart pulled by
// digest as plain allows), or another error when the recipe cannot be
// rebuilt or is not published.
//
// Before comparing, the kbuild that built the published version is
// checked against k (Kbuild.builtBy); what matched names it.
func Rebuild(ctx context.Context, b *builder.Builder, idx *index.RepositoryIndex, dir string, plain plainhttp.Policy, k Kbuild) (string, error) {
	p, err := b.Prepare(ctx, dir)
	if err != nil {
		return "", err
	}
	r := p.Recipe
	ver := strings.TrimPrefix(r.Spec.Version, "v")
	pub := idx.Find(r.Metadata.Name, ver, r.Spec.Build)
	if pub == nil {
		return "", fmt.Errorf("%s %s build %d is not published in the index", r.Metadata.Name, ver, r.Spec.Build)
	}
	by, err := k.builtBy(ctx, b, r.Metadata.Name, pub.Version, r.Spec.Build)
	if err != nil {
		return "", err
	}
	if by == "" {
		by = "an unknown kbuild (the site has no build info of it)"
	}
	published := map[string]*spec.ChartRef{}
	for _, v := range pub.Spec.Variants {
		for _, c := range v.Components {
			if c.Chart != nil {
				published[c.Chart.Name] = c.Chart
			}
		}
	}
	rebuilt := map[string]*spec.ChartRef{}
	var diffs []error
	for _, c := range p.Charts {
		pc := published[c.Key]
		if pc == nil {
			diffs = append(diffs, fmt.Errorf("chart %s is not in the published version", c.Key))
			continue
		}
		ref := *pc
		ref.Digest = c.Archive.Digest
		rebuilt[c.Key] = &ref
		if pc.Digest == c.Archive.Digest {
			continue
		}
		diff := fmt.Errorf("chart %s: archive published %s, rebuilt %s", c.Key, pc.Digest, c.Archive.Digest)
		data, err := chartpin.PullPinned(ctx, *pc, plain)
		switch {
		case err != nil:
			diff = fmt.Errorf("%w; the published chart could not be pulled to find the file: %v", diff, err)
		default:
			file, how, err := builder.CompareArchives(data, c.Archive.Data)
			switch {
			case err != nil:
				diff = fmt.Errorf("%w: %v", diff, err)
			case file == "":
				diff = fmt.Errorf("%w; every file is the same, so the archive's packing differs (published by %s; another kbuild or SOURCE_DATE_EPOCH?)", diff, by)
			default:
				diff = fmt.Errorf("%w; first difference: %s (%s)", diff, file, how)
			}
		}
		diffs = append(diffs, diff)
	}
	if len(diffs) > 0 {
		return "", &DifferError{errors.Join(diffs...)}
	}
	rec := builder.Record(r, rebuilt)
	d, err := rec.Spec.Digest()
	if err != nil {
		return "", err
	}
	if d != pub.Digest {
		return "", &DifferError{fmt.Errorf("every chart matches, but the spec digest differs: published %s, rebuilt %s (the recipe's package metadata changed)", pub.Digest, d)}
	}
	return fmt.Sprintf("%s %s build %d: %d charts and spec %s; published by %s", r.Metadata.Name, ver, r.Spec.Build, len(p.Charts), d, by), nil
}

// RebuildAll runs Rebuild for each recipe directory of dirs and writes
// one line each to w — "DIR: MATCH …", "DIR: DIFFER: …", "DIR: REFUSED:
// …" (published by another kbuild) or "DIR: FAILED: …" — then how many
// did not match. explain rewrites an error before it is written (nil
// leaves it). It returns how many differ or failed, and how many were
// refused.
func RebuildAll(ctx context.Context, w io.Writer, b *builder.Builder, idx *index.RepositoryIndex, dirs []string, plain plainhttp.Policy, k Kbuild, explain func(error) error) (differ, other int) {
	if explain == nil {
		explain = func(err error) error { return err }
	}
	for _, d := range dirs {
		msg, err := Rebuild(ctx, b, idx, d, plain, k)
		var de *DifferError
		switch {
		case errors.Is(err, ErrOtherKbuild):
			other++
			fmt.Fprintf(w, "%s: REFUSED: %v\n", d, explain(err))
		case errors.As(err, &de):
			differ++
			fmt.Fprintf(w, "%s: DIFFER: %v\n", d, de.Err)
		case err != nil:
			differ++
			fmt.Fprintf(w, "%s: FAILED: %v\n", d, explain(err))
		default:
			fmt.Fprintf(w, "%s: MATCH %s\n", d, msg)
		}
	}
	if other > 0 {
		fmt.Fprintf(w, "%d of %d recipes were published by another kbuild and not compared\n", other, len(dirs))
	}
	if differ > 0 {
		fmt.Fprintf(w, "%d of %d recipes do not rebuild to what is published\n", differ, len(dirs))
	}
	return differ, other
}
