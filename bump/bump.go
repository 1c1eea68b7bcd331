package bump

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/watch"
)

// Errors a bump wraps.
var (
	// ErrNotAllowed: the version asked for is not one the rule allows.
	ErrNotAllowed = errors.New("version not allowed by the watch rule")
	// ErrDigest: upstream lists a digest its download does not have.
	ErrDigest = errors.New("upstream lists another digest than it serves")
	// ErrInvalid: the bumped recipe does not validate; it was put back.
	ErrInvalid = errors.New("the bumped recipe does not validate")
)

// Bumper bumps recipes. Fetcher fetches and pins the new sources, Looker
// looks upstream and resolves images, Builder validates and renders.
type Bumper struct {
	// Fetcher fetches and pins the upstream sources (default: the
	// Builder's).
	Fetcher *sources.Fetcher
	Looker  *watch.Looker
	Builder *builder.Builder
	// Index, when set, is the verified published index the bump is
	// compared with; otherwise the recipe at git HEAD is.
	Index *index.RepositoryIndex
	// Warnf receives warnings (default: discarded).
	Warnf func(format string, args ...any)
}

// Result is what a bump did.
type Result struct {
	// Dir and File are the recipe's directory and recipe.yaml.
	Dir, File string
	// Package is the package name.
	Package string
	// From and To are the versions before and after.
	From, To string
	// Build is the build after: 1 at a new version, the next build when
	// only upstreams under also: moved (the version stays).
	Build int
	// Also lists the upstreams under also: that moved while the package's
	// own did not, each "NAME CURRENT -> NEWEST"; empty when the version
	// moved.
	Also []string
	// Set is true for a release set: its member pins follow the builds
	// its members' recipes are at, once published.
	Set bool
	// Members lists the pins a set bump moved, "NAME V build N -> V' build
	// N'".
	Members []string
	// Waiting lists, for a set, the member builds its members' recipes
	// are at that the published index does not hold yet: nothing changes
	// until it does.
	Waiting []string
	// Changed is false when the recipe was already at To and nothing it
	// follows under also: moved: nothing is written.
	Changed bool
	// Changes lists each field changed, "field: old -> new", in file order.
	Changes []string
	// Report is the rendered difference to the published (or committed)
	// version; nil when nothing changed.
	Report *review.Report
}

// fetcher returns Fetcher, or the Builder's when it is nil.
func (b *Bumper) fetcher() *sources.Fetcher {
	if b.Fetcher != nil {
		return b.Fetcher
	}
	return b.Builder.Fetcher()
}

// Bump moves the recipe in dir to version to ("" for the newest the watch
// rule allows): see the package documentation. Nothing is written unless
// every new source and image is fetched, verified and pinned; a recipe
// that does not validate afterwards is put back and the error wraps
// ErrInvalid.
func (b *Bumper) Bump(ctx context.Context, dir, to string) (*Result, error) {
	plan, err := b.plan(ctx, dir, to)
	if err != nil || !plan.res.Changed {
		if plan != nil {
			return plan.res, err
		}
		return nil, err
	}
	res := plan.res
	if err := atomicfile.WriteFile(res.File, plan.after, 0o644); err != nil {
		return nil, err
	}
	restore := func(cause error) error {
		if err := atomicfile.WriteFile(res.File, plan.before, 0o644); err != nil {
			return fmt.Errorf("%w; putting %s back failed too: %w", cause, res.File, err)
		}
		return fmt.Errorf("%w; %s is put back as it was", cause, res.File)
	}
	probs, err := b.Builder.Validate(ctx, dir, false)
	if err != nil {
		return nil, restore(fmt.Errorf("bumped to %s, %w: %w", res.To, ErrInvalid, err))
	}
	if errs := probs.Errors(); len(errs) > 0 {
		var lines []string
		for _, p := range errs {
			lines = append(lines, p.String())
		}
		return nil, restore(fmt.Errorf("recipe %s at %s: %w:\n  %s", dir, res.To, ErrInvalid, strings.Join(lines, "\n  ")))
	}
	if res.Set {
		// The new pins resolve against the published index: every member
		// build there, no image pinned twice, none that would move off.
		if probs := b.Builder.CheckSets([]string{dir}, b.Index, "the published index")[dir]; len(probs.Errors()) > 0 {
			var lines []string
			for _, p := range probs.Errors() {
				lines = append(lines, p.String())
			}
			return nil, restore(fmt.Errorf("release set %s at %s build %d: %w:\n  %s", dir, res.To, res.Build, ErrInvalid, strings.Join(lines, "\n  ")))
		}
	}
	sides := review.Sides{Builder: b.Builder, Warnf: b.Warnf}
	if b.Index != nil {
		res.Report, err = sides.AgainstIndex(ctx, dir, b.Index)
	} else {
		res.Report, err = sides.AgainstCommit(ctx, dir, "HEAD")
	}
	if err != nil {
		return res, fmt.Errorf("recipe %s is bumped to %s, but comparing it failed: %w", dir, res.To, err)
	}
	return res, nil
}

// plan is a bump computed but not written.
type plan struct {
	res           *Result
	before, after []byte
}

func (b *Bumper) plan(ctx context.Context, dir, to string) (*plan, error) {
	l, err := builder.Load(dir)
	if err != nil {
		return nil, err
	}
	if l.Recipe == nil {
		return nil, l.Err()
	}
	r := l.Recipe
	if members, set, err := isSet(r); err != nil {
		return nil, fmt.Errorf("recipe %s: %w", dir, err)
	} else if set {
		before, err := os.ReadFile(l.File)
		if err != nil {
			return nil, err
		}
		return b.planSet(l, before, members)
	}
	rule, err := watch.Load(dir)
	if err != nil {
		return nil, err
	}
	if err := rule.Against(filepath.Join(dir, watch.FileName), r); err != nil {
		return nil, err
	}
	before, err := os.ReadFile(l.File)
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: dir, File: l.File, Package: r.Metadata.Name, From: r.Spec.Version}
	pl := &plan{res: res, before: before, after: before}
	sels := map[string]watch.Selection{}
	sel, err := b.Looker.Lookup(ctx, rule.Upstream)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: %w", dir, err)
	}
	sels[""] = sel
	var target watch.Candidate
	var ok bool
	if to == "" {
		if target, ok = sel.Newest(); !ok {
			return nil, fmt.Errorf("recipe %s: %s lists no version the watch rule allows (%d names are not versions, %d versions refused): %w", dir, watch.Describe(rule.Upstream), sel.NotVersions, sel.Refused, ErrNotAllowed)
		}
	} else if target, ok = sel.Find(strings.TrimPrefix(to, "v")); !ok {
		newest := "none"
		if c, ok := sel.Newest(); ok {
			newest = c.Version
		}
		return nil, fmt.Errorf("recipe %s: %s lists no version %s the watch rule allows (the newest allowed is %s): %w", dir, watch.Describe(rule.Upstream), to, newest, ErrNotAllowed)
	}
	res.To = versionLike(r.Spec.Version, target.Version)
	for _, name := range sortedKeys(rule.Also) {
		s, err := b.Looker.Lookup(ctx, rule.Also[name])
		if err != nil {
			return nil, fmt.Errorf("recipe %s: also %s: %w", dir, name, err)
		}
		sels[name] = s
	}
	// At the same version, only an upstream under also: that moved makes
	// a bump: the version stays and the build goes up.
	same := sameVersion(r.Spec.Version, target.Version)
	res.Build = 1
	if same {
		for _, name := range sortedKeys(rule.Also) {
			if rule.Behind(r, name, sels[name]) {
				c, _ := sels[name].Newest()
				res.Also = append(res.Also, fmt.Sprintf("%s %s -> %s", name, rule.CurrentTag(r, name), c.Tag))
			}
		}
		if len(res.Also) == 0 {
			return pl, nil
		}
		res.Build = r.Spec.Build + 1
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(before, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: %v", l.File, err)
	}
	e := &editor{file: l.File, root: doc.Content[0]}
	e.set(res.From, res.To, "spec", "version")
	e.set(strconv.Itoa(r.Spec.Build), strconv.Itoa(res.Build), "spec", "build")
	versionEdits := len(e.edits)
	work, err := os.MkdirTemp("", "kbuild-bump-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	appVersion, err := b.sources(ctx, dir, work, r, rule, sels, target, e)
	if err != nil {
		return nil, fmt.Errorf("recipe %s at %s: %w", dir, res.To, err)
	}
	if err := b.images(ctx, r, rule, sels, target, appVersion, e); err != nil {
		return nil, fmt.Errorf("recipe %s at %s: %w", dir, res.To, err)
	}
	if err := requires(rule, sels, target, e); err != nil {
		return nil, fmt.Errorf("recipe %s at %s: %w", dir, res.To, err)
	}
	if e.err != nil {
		return nil, e.err
	}
	if same && len(e.edits) == versionEdits {
		// The moved upstream changes nothing the recipe pins.
		res.Also = nil
		return pl, nil
	}
	oldCap := fmt.Sprintf("build:%s@%s+build.%d", r.Metadata.Name, r.Spec.Version, r.Spec.Build)
	if p := recipe.MappingPath(e.root, "spec", "package", "provides"); p != nil && p.Kind == yaml.SequenceNode {
		for _, it := range p.Content {
			if it.Kind == yaml.ScalarNode && it.Value == oldCap {
				e.edit(it, "spec.package.provides", fmt.Sprintf("build:%s@%s+build.%d", r.Metadata.Name, res.To, res.Build))
			}
		}
	}
	after, err := applyEdits(before, e.edits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.File, err)
	}
	pl.after = after
	res.Changes = e.changes
	res.Changed = true
	return pl, nil
}

// sources pins every source the rule follows at its new version and
// returns the appVersion of the bumped chart source ("" when none).
func (b *Bumper) sources(ctx context.Context, dir, work string, r *recipe.Recipe, rule *watch.Rule, sels map[string]watch.Selection, target watch.Candidate, e *editor) (string, error) {
	appVersion := ""
	for _, name := range sortedKeys(r.Spec.Sources) {
		src := r.Spec.Sources[name]
		sr, followed := rule.Sources[name]
		if !followed {
			if (src.URL != "" || src.Chart != nil || src.Git != nil) && !slices.Contains(rule.Keep, name) {
				return "", fmt.Errorf("source %s: watch.yaml neither follows it (sources:) nor keeps it (keep:); say which", name)
			}
			continue
		}
		c := target
		if sr.From != "" {
			var ok bool
			if c, ok = sels[sr.From].Newest(); !ok {
				return "", fmt.Errorf("source %s: upstream %s lists no allowed version", name, sr.From)
			}
		}
		switch {
		case sr.URL != "" || sr.Asset != "":
			if src.URL == "" {
				return "", fmt.Errorf("source %s: the rule gives a URL, but the source is not a url source", name)
			}
			next := src
			listed := ""
			if sr.Asset != "" {
				a, ok := c.Assets[watch.Expand(sr.Asset, c, "")]
				if !ok {
					return "", fmt.Errorf("source %s: release %s has no asset %s", name, c.Tag, watch.Expand(sr.Asset, c, ""))
				}
				next.URL, listed = a.URL, a.Digest
			} else {
				next.URL = watch.Expand(sr.URL, c, "")
			}
			next.SHA256 = ""
			pinned, err := b.fetcher().Pin(ctx, next)
			if err != nil {
				return "", fmt.Errorf("source %s: %w", name, err)
			}
			got := "sha256:" + strings.TrimPrefix(pinned.SHA256, "sha256:")
			if listed != "" && listed != got {
				return "", fmt.Errorf("source %s: release %s lists asset %s with digest %s, but its download %s has %s: %w; nothing is changed", name, c.Tag, path.Base(next.URL), listed, next.URL, got, ErrDigest)
			}
			e.set(src.URL, next.URL, "spec", "sources", name, "url")
			sha := strings.TrimPrefix(got, "sha256:")
			if strings.HasPrefix(src.SHA256, "sha256:") {
				sha = got
			}
			e.set(src.SHA256, sha, "spec", "sources", name, "sha256")
		case sr.GitTag != "":
			if src.Git == nil {
				return "", fmt.Errorf("source %s: the rule gives a git tag, but the source is not a git source", name)
			}
			tag := watch.Expand(sr.GitTag, c, "")
			commit, err := b.Looker.GitTag(ctx, src.Git.URL, tag)
			if err != nil {
				return "", fmt.Errorf("source %s: %w", name, err)
			}
			next := src
			g := *src.Git
			g.Commit = commit
			next.Git = &g
			if _, err := b.fetcher().Fetch(ctx, dir, work, name, next, sources.PluginInfo{}); err != nil {
				return "", err
			}
			e.set(src.Git.Commit, commit, "spec", "sources", name, "git", "commit")
		case sr.Chart:
			if src.Chart == nil {
				return "", fmt.Errorf("source %s: the rule follows a chart, but the source is not a chart source", name)
			}
			next := src
			ch := *src.Chart
			ch.Version, ch.Digest = c.Tag, ""
			next.Chart = &ch
			pinned, err := b.fetcher().Pin(ctx, next)
			if err != nil {
				return "", fmt.Errorf("source %s: %w", name, err)
			}
			if c.Digest != "" && c.Digest != pinned.Chart.Digest {
				return "", fmt.Errorf("source %s: the index lists chart %s %s with digest %s, but its archive has %s: %w", name, ch.Name, ch.Version, c.Digest, pinned.Chart.Digest, ErrDigest)
			}
			got, err := b.fetcher().Fetch(ctx, dir, work, name, pinned, sources.PluginInfo{})
			if err != nil {
				return "", err
			}
			if appVersion, err = chartAppVersion(got.Path); err != nil {
				return "", fmt.Errorf("source %s: %w", name, err)
			}
			e.set(src.Chart.Version, ch.Version, "spec", "sources", name, "chart", "version")
			e.set(src.Chart.Digest, pinned.Chart.Digest, "spec", "sources", name, "chart", "digest")
		}
	}
	return appVersion, nil
}

// chartAppVersion reads appVersion from dir/Chart.yaml.
func chartAppVersion(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := sigsyaml.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, "Chart.yaml"), err)
	}
	return c.AppVersion, nil
}

// images re-pins every image reference a rule matches: in
// spec.package.images, image sources and chart values.
func (b *Bumper) images(ctx context.Context, r *recipe.Recipe, rule *watch.Rule, sels map[string]watch.Selection, target watch.Candidate, appVersion string, e *editor) error {
	pinned := map[string]recipe.Image{} // old normal form -> new
	resolve := func(ref string) (recipe.Image, bool, error) {
		old, err := recipe.ParseImage(ref)
		if err != nil {
			return recipe.Image{}, false, nil
		}
		if im, ok := pinned[old.String()]; ok {
			return im, true, nil
		}
		for _, ir := range rule.Images {
			if ok, _ := path.Match(ir.Repository, old.Repository); !ok {
				continue
			}
			c := target
			if ir.From != "" {
				var ok bool
				if c, ok = sels[ir.From].Newest(); !ok {
					return recipe.Image{}, false, fmt.Errorf("image %s: upstream %s lists no allowed version", ref, ir.From)
				}
			}
			tag := watch.Expand(ir.Tag, c, appVersion)
			if strings.Contains(ir.Tag, "{appVersion}") && appVersion == "" {
				return recipe.Image{}, false, fmt.Errorf("image %s: its tag follows {appVersion}, but no followed chart source's Chart.yaml has one", ref)
			}
			im, err := b.Looker.ResolveImage(ctx, old.Repository+":"+tag, rule.Platform)
			if err != nil {
				return recipe.Image{}, false, err
			}
			pinned[old.String()] = im
			return im, true, nil
		}
		return recipe.Image{}, false, nil
	}
	if n := recipe.MappingPath(e.root, "spec", "package", "images"); n != nil {
		for _, it := range n.Content {
			im, ok, err := resolve(it.Value)
			if err != nil {
				return err
			}
			if ok {
				e.edit(it, "spec.package.images", im.String())
			}
		}
	}
	for _, name := range sortedKeys(r.Spec.Sources) {
		if src := r.Spec.Sources[name]; src.Image != nil {
			im, ok, err := resolve(src.Image.Ref)
			if err != nil {
				return err
			}
			if ok {
				e.set(src.Image.Ref, im.String(), "spec", "sources", name, "image", "ref")
			}
		}
	}
	charts := recipe.MappingPath(e.root, "spec", "charts")
	if charts == nil || charts.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(charts.Content); i += 2 {
		values := recipe.MappingPath(charts.Content[i+1], "values")
		if values == nil {
			continue
		}
		var err error
		field := "spec.charts." + charts.Content[i].Value + ".values"
		scalars(values, nil, "", func(n, parent *yaml.Node, key string) {
			if err != nil {
				return
			}
			// A whole reference, with its tag or digest (a bare
			// repository beside a tag is not one).
			if explicit(n.Value) {
				im, ok, rerr := resolve(n.Value)
				if rerr != nil || ok {
					err = rerr
					if ok {
						e.edit(n, field, im.String())
					}
					return
				}
			}
			// A tag beside its repository: tag: "TAG@DIGEST" or tag: TAG.
			if key != "tag" || parent == nil {
				return
			}
			repo := recipe.MappingPath(parent, "repository")
			if repo == nil || repo.Kind != yaml.ScalarNode {
				return
			}
			im, ok, rerr := resolve(repo.Value + ":" + n.Value)
			if rerr != nil || !ok {
				err = rerr
				return
			}
			e.edit(n, field, im.Tag+"@"+im.Digest)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// requires sets the version constraint of every requirement a rule of
// rule.Requires names, in every variant.
func requires(rule *watch.Rule, sels map[string]watch.Selection, target watch.Candidate, e *editor) error {
	variants := recipe.MappingPath(e.root, "spec", "package", "variants")
	for _, q := range rule.Requires {
		c := target
		if q.From != "" {
			var ok bool
			if c, ok = sels[q.From].Newest(); !ok {
				return fmt.Errorf("requirement on %s: upstream %s lists no allowed version", q.Package, q.From)
			}
		}
		found := false
		if variants != nil && variants.Kind == yaml.SequenceNode {
			for _, v := range variants.Content {
				reqs := recipe.MappingPath(v, "requires")
				if reqs == nil || reqs.Kind != yaml.SequenceNode {
					continue
				}
				for _, rq := range reqs.Content {
					if p := recipe.MappingPath(rq, "package"); p != nil && p.Value == q.Package {
						found = true
						if n := recipe.MappingPath(rq, "version"); n != nil && n.Kind == yaml.ScalarNode {
							e.edit(n, "spec.package.variants.requires", watch.Expand(q.Version, c, ""))
						}
					}
				}
			}
		}
		if !found {
			return fmt.Errorf("watch.yaml follows the requirement on %s, but no variant requires it", q.Package)
		}
	}
	return nil
}

// explicit reports whether value is an image reference with a tag or a
// digest written out.
func explicit(value string) bool {
	im, err := recipe.ParseImage(value)
	return err == nil && (im.Digest != "" || strings.HasSuffix(value, ":"+im.Tag))
}

// editor collects the edits of one recipe.
type editor struct {
	file    string
	root    *yaml.Node
	edits   []scalarEdit
	changes []string
	err     error
}

// set replaces the scalar at keys, which must hold old, with value.
func (e *editor) set(old, value string, keys ...string) {
	if old == value {
		return
	}
	n := recipe.MappingPath(e.root, keys...)
	field := strings.Join(keys, ".")
	if n == nil || n.Kind != yaml.ScalarNode {
		if e.err == nil {
			e.err = fmt.Errorf("%s: %s is not written as one value; edit it by hand", e.file, field)
		}
		return
	}
	e.edit(n, field, value)
}

func (e *editor) edit(n *yaml.Node, field, value string) {
	if n.Value == value {
		return
	}
	e.edits = append(e.edits, scalarEdit{node: n, value: value})
	e.changes = append(e.changes, fmt.Sprintf("%s (line %d): %s -> %s", field, n.Line, n.Value, value))
}

// versionLike writes v as cur is written: with a "v" when cur has one.
func versionLike(cur, v string) string {
	if strings.HasPrefix(cur, "v") {
		return "v" + v
	}
	return v
}

func sameVersion(cur, v string) bool { return strings.TrimPrefix(cur, "v") == v }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
