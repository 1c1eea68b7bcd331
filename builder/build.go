package builder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"golang.org/x/sync/errgroup"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// Builder builds recipes with a source fetcher into a publish target.
type Builder struct {
	fetcher    *sources.Fetcher
	target     oci.Target
	out        string
	epoch      time.Time
	jobs       int
	logf       func(format string, args ...any)
	builderID  string
	builderSum string
	root       string
	commit     string

	allowUnpinned bool
	kubeVersion   string
	workDir       string
	adopt         bool
	chartSigners  []trust.Signer
	keyless       sigbundle.KeylessSigner
}

// New returns a Builder that fetches with f and publishes to t. t may be
// nil for a Builder that only prepares (validate, images).
func New(f *sources.Fetcher, t oci.Target, opts ...Option) (*Builder, error) {
	if f == nil {
		return nil, errors.New("builder: a source fetcher is required")
	}
	b := defaults()
	b.fetcher, b.target = f, t
	for _, o := range opts {
		o(b)
	}
	return b, nil
}

// Fetcher returns the source fetcher the builder fetches with.
func (b *Builder) Fetcher() *sources.Fetcher { return b.fetcher }

// KubeVersion returns the Kubernetes version the builder renders charts
// as ("" for the default; WithKubeVersion).
func (b *Builder) KubeVersion() string { return b.kubeVersion }

// BuiltBy returns the kbuild the builder stamps its builds with: its ID
// and module hash (WithBuilderID, WithBuilderSum).
func (b *Builder) BuiltBy() (id, sum string) { return b.builderID, b.builderSum }

// Epoch returns the time the builder stamps into archives and images
// (WithEpoch), for what describes its builds (provenance, SBOMs).
func (b *Builder) Epoch() time.Time { return b.epoch }

// Prepared is a recipe whose charts are assembled, packed and checked, and
// not yet published.
type Prepared struct {
	*Loaded
	Sources []spec.ResolvedSource
	Charts  []*PreparedChart
	// Problems found by rendering (undeclared CRDs, unpinned images), as
	// errors and warnings with the recipe's lines.
	Problems recipe.Problems
}

// PreparedChart is one packed chart and what rendering found in it.
type PreparedChart struct {
	Key      string
	Archive  *Archive
	Rendered *render.Rendered
}

// Prepare loads, validates, fetches, assembles, packs and renders the
// recipe in dir. It pushes and writes nothing. A recipe with errors returns
// a *recipe.ProblemsError listing them all.
func (b *Builder) Prepare(ctx context.Context, dir string) (*Prepared, error) {
	l, err := b.Load(dir)
	if err != nil {
		return nil, err
	}
	if err := l.Err(); err != nil {
		return nil, err
	}
	return b.PrepareLoaded(ctx, l)
}

// Load loads and validates the recipe in dir (see the package function
// Load), reporting unpinned images as warnings when the Builder allows them.
func (b *Builder) Load(dir string) (*Loaded, error) {
	l, err := Load(dir)
	if err == nil {
		b.relax(l.Problems)
	}
	return l, err
}

// relax downgrades what the Builder's options allow to warnings.
func (b *Builder) relax(probs recipe.Problems) {
	for i := range probs {
		if b.allowUnpinned && probs[i].Code == recipe.CodeUnpinnedImage {
			probs[i].Severity = recipe.Warning
		}
	}
}

// PrepareLoaded prepares a loaded recipe without first refusing its static
// errors (kbuild images uses it to render recipes whose only errors are
// unpinned images). l.Recipe must not be nil.
func (b *Builder) PrepareLoaded(ctx context.Context, l *Loaded) (*Prepared, error) {
	dir := l.Dir
	r := l.Recipe
	p := &Prepared{Loaded: l, Problems: l.Problems}
	work, err := b.makeWorkDir(r.Metadata.Name)
	if err != nil {
		return nil, err
	}
	defer work.remove()

	fetched, err := b.fetchAll(ctx, l, work)
	if err != nil {
		return nil, err
	}
	for _, n := range slices.Sorted(maps.Keys(fetched)) {
		p.Sources = append(p.Sources, fetched[n].Resolved)
		field := "spec.sources." + n
		for _, w := range fetched[n].Warnings {
			p.Problems = append(p.Problems, recipe.Problem{Severity: recipe.Warning, Field: field, Line: l.Pos.Line(field), Message: w})
		}
	}
	b.logf("%s: %d sources verified", r.Metadata.Name, len(fetched))

	keys := slices.Sorted(maps.Keys(r.Spec.Charts))
	p.Charts = make([]*PreparedChart, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(b.jobs)
	for i, key := range keys {
		g.Go(func() error {
			chartDir := func() (string, error) {
				w, err := work.get()
				return filepath.Join(w, "charts", key), err
			}
			as, err := assemble(gctx, dir, r, key, fetched, chartDir, b.workDir != "", b.fetcher.PluginTimeout())
			if err != nil {
				return fmt.Errorf("recipe %s: %w", dir, err)
			}
			a, err := as.pack(key, ChartVersion(r), b.epoch)
			if err != nil {
				return fmt.Errorf("recipe %s: %w", dir, err)
			}
			rd, err := render.Render(a.Data, namespaceOf(r, key), render.WithKubeVersion(b.kubeVersion))
			if err != nil {
				return fmt.Errorf("recipe %s: %w", dir, err)
			}
			p.Charts[i] = &PreparedChart{Key: key, Archive: a, Rendered: rd}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rendered := CheckRendered(r, l.Pos, p.Charts)
	b.relax(rendered)
	p.Problems = append(p.Problems, rendered...)
	if errs := p.Problems.Errors(); len(errs) > 0 {
		return p, &recipe.ProblemsError{File: l.File, Problems: p.Problems}
	}
	return p, nil
}

// fetchAll fetches and verifies every source of a loaded recipe in
// parallel into work. One failing source does not stop the others: the
// error names every source that failed, sorted by name, each with the
// recipe file and line that declares it (an offline error also says how to
// fetch it).
func (b *Builder) fetchAll(ctx context.Context, l *Loaded, work *lazyDir) (map[string]*sources.Result, error) {
	r := l.Recipe
	info := sources.PluginInfo{Package: r.Metadata.Name, Version: r.Spec.Version}
	names := slices.Sorted(maps.Keys(r.Spec.Sources))
	results := make([]*sources.Result, len(names))
	errs := make([]error, len(names))
	var g errgroup.Group
	g.SetLimit(b.jobs)
	for i, n := range names {
		g.Go(func() error {
			src, out := r.Spec.Sources[n], ""
			if src.Dir == "" { // a dir source is read where it is
				w, err := work.get()
				if err != nil {
					errs[i] = err
					return nil
				}
				out = filepath.Join(w, "src", n)
			}
			results[i], errs[i] = b.fetcher.Fetch(ctx, l.Dir, out, n, src, info)
			return nil
		})
	}
	_ = g.Wait()
	fetched := map[string]*sources.Result{}
	var failed []error
	for i, n := range names {
		if errs[i] != nil {
			// The fetcher's error names the source; the file and line say
			// where it is declared, and which recipe.
			failed = append(failed, fmt.Errorf("%s line %d: %w", l.File, l.Pos.Line("spec.sources."+n), errs[i]))
			continue
		}
		fetched[n] = results[i]
	}
	switch {
	case len(failed) == 1:
		return nil, failed[0]
	case len(failed) > 1:
		return nil, fmt.Errorf("%d of %d sources failed:\n%w", len(failed), len(names), errors.Join(failed...))
	}
	return fetched, nil
}

// Fetch fetches and verifies every source of the recipe in dir into the
// cache without building, and returns what was resolved, sorted by name.
func (b *Builder) Fetch(ctx context.Context, dir string) ([]spec.ResolvedSource, error) {
	l, err := b.Load(dir)
	if err != nil {
		return nil, err
	}
	if l.Recipe == nil {
		return nil, l.Err()
	}
	work := &lazyDir{make: func() (string, error) { return os.MkdirTemp("", "kbuild-fetch-") }, temporary: true}
	defer work.remove()
	fetched, err := b.fetchAll(ctx, l, work)
	if err != nil {
		return nil, err
	}
	var out []spec.ResolvedSource
	for _, n := range slices.Sorted(maps.Keys(fetched)) {
		out = append(out, fetched[n].Resolved)
	}
	return out, nil
}

// namespaceOf returns the install namespace of the first component that
// installs chart key, for rendering.
func namespaceOf(r *recipe.Recipe, key string) string {
	for _, v := range r.Spec.Package.Variants {
		for _, c := range v.Components {
			if c.Path == key && c.Install != nil && c.Install.Namespace != "" {
				return c.Install.Namespace
			}
		}
	}
	return ""
}

// CheckRendered compares what the rendered charts ship and run with what
// the package declares: a CRD shipped but not in package.crds and an image
// run but not pinned in package.images are errors; a declared CRD no chart
// ships is a warning.
func CheckRendered(r *recipe.Recipe, pos recipe.Positions, charts []*PreparedChart) recipe.Problems {
	var probs recipe.Problems
	add := func(sev recipe.Severity, field, format string, args ...any) *recipe.Problem {
		probs = append(probs, recipe.Problem{Severity: sev, Field: field, Line: pos.Line(field), Message: fmt.Sprintf(format, args...)})
		return &probs[len(probs)-1]
	}
	declared := map[string]bool{}
	for _, c := range r.Spec.Package.CRDs {
		declared[c] = true
	}
	shipped := map[string]bool{}
	for _, c := range charts {
		for _, crd := range c.Rendered.CRDs {
			shipped[crd] = true
			if !declared[crd] {
				add(recipe.Error, "spec.package.crds", "chart %s ships CRD %s, which package.crds does not declare; add it so clusters know this package owns it", c.Key, crd)
			}
		}
		for _, img := range c.Rendered.Images {
			pin, ok := PinFor(img, r.Spec.Package.Images)
			switch {
			case !ok && !listed(img, r.Spec.Package.Images):
				p := add(recipe.Error, "spec.package.images", "%s", unpinnedMessage(c.Key, img, r.Spec.Package.Images, pos))
				p.Code = recipe.CodeUnpinnedImage
			case ok && !strings.Contains(img, "@"):
				add(recipe.Warning, "spec.package.images", "chart %s runs image %s by tag, which a cluster resolves when it pulls; package.images pins %s: make the chart run the pinned reference (a values change or a patch), or kbuild test fails its pods as not running a pinned digest", c.Key, img, pin)
			}
		}
	}
	for i, c := range r.Spec.Package.CRDs {
		if !shipped[c] {
			add(recipe.Warning, fmt.Sprintf("spec.package.crds[%d]", i), "CRD %s is declared but no chart ships it", c)
		}
	}
	return probs
}

// listed reports whether image is in images by repository and tag without
// a digest: the static check already reports it as not pinned.
func listed(image string, images []string) bool {
	want, err := recipe.ParseImage(image)
	if err != nil {
		return false
	}
	for _, i := range images {
		if have, err := recipe.ParseImage(i); err == nil && have.Digest == "" && have.Repository == want.Repository && have.Tag == want.Tag {
			return true
		}
	}
	return false
}

// unpinnedMessage says that chart key runs image, which no entry of images
// pins: it names the entries of the same repository with their lines (a
// digest the chart does not run), and gives a reference to paste.
func unpinnedMessage(key, image string, images []string, pos recipe.Positions) string {
	im, _ := recipe.ParseImage(image)
	msg := fmt.Sprintf("chart %s runs image %s, which package.images does not pin", key, image)
	for i, p := range images {
		if have, err := recipe.ParseImage(p); err == nil && have.Repository == im.Repository {
			field := fmt.Sprintf("spec.package.images[%d]", i)
			if l := pos.Line(field); l > 0 {
				field += fmt.Sprintf(", line %d", l)
			}
			msg += fmt.Sprintf("; package.images declares %s (%s)", p, field)
		}
	}
	if im.Digest != "" {
		return msg + "; if the chart's digest is the one to ship, list: " + im.String()
	}
	return msg + "; add " + im.String() + "@sha256:<digest> (kbuild images DIR looks the digest up and prints the block)"
}

// Result is one published build.
type Result struct {
	Name, Version string
	Build         int
	RecordFile    string
	Record        spec.PackageSource
	Info          spec.BuildInfo
	// Reused lists chart refs that were already published with the same
	// content.
	Reused []string
	// Adopted lists, one sentence each, charts another tool published
	// under this version and build with the same files (WithAdopt): their
	// published digests are kept.
	Adopted []string
	// Pushed lists chart refs written by this build.
	Pushed []string
	// Charts are the charts as they are in the target, to attach
	// referrers to.
	Charts []PublishedChart
	// RecipeFile is the recipe built and Warnings what preparing it found
	// that did not stop the build, with the recipe's lines.
	RecipeFile string
	Warnings   recipe.Problems
}

// PublishedChart is a chart in the target: repository, tag and manifest
// descriptor.
type PublishedChart struct {
	Key, Repo, Tag string
	Manifest       v1.Descriptor
}

// ErrImmutable is wrapped by the error returned when a tag already holds
// different content.
var ErrImmutable = fault.New(fault.Refused, "already published with different content; published versions do not change, give the recipe a new build number")

// ErrAdoptable is wrapped, with ErrImmutable, by the error of a build
// without WithAdopt whose tag holds other content: if another tool such
// as kubepkg published it, WithAdopt keeps it when its files are the same.
var ErrAdoptable = errors.New("another tool such as kubepkg may have published it")

// ErrNoRecipe is wrapped by the error about a directory without a
// recipe.yaml where a recipe was expected.
var ErrNoRecipe = errors.New("a recipe directory holds recipe.yaml")

// ErrPluginTimeout is wrapped by the error about a step plugin that ran
// longer than WithPluginTimeout allows; its process group is ended.
var ErrPluginTimeout = errors.New("step plugin timed out")

// Publish pushes the prepared charts (after checking that no tag already
// holds different content), then writes the build record and its BuildInfo.
func (b *Builder) Publish(ctx context.Context, p *Prepared) (*Result, error) {
	if b.target == nil {
		return nil, errors.New("builder: no publish target")
	}
	r := p.Recipe
	version := ChartVersion(r)
	tag := OCITag(version)
	res := &Result{Name: r.Metadata.Name, Version: strings.TrimPrefix(r.Spec.Version, "v"), Build: r.Spec.Build, RecipeFile: p.File}
	for _, pr := range p.Problems {
		if pr.Severity == recipe.Warning {
			res.Warnings = append(res.Warnings, pr)
		}
	}
	type push struct {
		c     *PreparedChart
		repo  string
		img   imageWithDigest
		skip  bool
		adopt *adopted // the published chart kept instead, with WithAdopt
	}
	var pushes []push
	for _, c := range p.Charts {
		repo := r.Metadata.Name + "/" + c.Key
		img, err := oci.ChartImage(c.Archive.Data, c.Rendered.Chart.Metadata, b.epoch)
		if err != nil {
			return nil, err
		}
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		have, ok, err := b.target.Lookup(ctx, repo, tag)
		if err != nil {
			return nil, fmt.Errorf("recipe %s: chart %s: %w", p.Dir, c.Key, err)
		}
		var adopt *adopted
		if ok && have != d {
			if !b.adopt {
				return nil, fmt.Errorf("recipe %s: chart %s: %s %w (published manifest %s, built %s): %w",
					p.Dir, c.Key, b.target.Ref(repo, tag), ErrImmutable, have, d, ErrAdoptable)
			}
			pub, err := b.target.Image(ctx, repo, tag)
			if err == nil {
				adopt, err = adoptPublished(pub, c.Archive)
			}
			if err != nil {
				return nil, fmt.Errorf("recipe %s: chart %s: adopting %s: %w; give the recipe a new build number", p.Dir, c.Key, b.target.Ref(repo, tag), err)
			}
		}
		pushes = append(pushes, push{c: c, repo: repo, img: imageWithDigest{img, d.String()}, skip: ok, adopt: adopt})
	}
	info := spec.BuildInfo{
		APIVersion: spec.BuildInfoAPIVersion, Kind: spec.BuildInfoKind,
		Package: res.Name, Version: res.Version, Build: res.Build,
		Recipe: b.recipePath(p.Dir), RecipeDigest: p.Digest, Commit: b.commit,
		Builder: b.builderID, BuilderSum: b.builderSum, Sources: p.Sources,
	}
	chartRefs := map[string]*spec.ChartRef{}
	for _, ps := range pushes {
		ref := b.target.Ref(ps.repo, tag)
		switch {
		case ps.adopt != nil:
			res.Adopted = append(res.Adopted, fmt.Sprintf("%s: published by another tool with the same files and Chart.yaml meaning; adopted, keeping its archive digest %s (this build's would be %s)",
				ref, ps.adopt.archiveDigest, ps.c.Archive.Digest))
		case ps.skip:
			b.logf("%s: %s already published with the same content, reusing it", res.Name, ref)
			res.Reused = append(res.Reused, ref)
		default:
			if err := b.target.Push(ctx, ps.repo, tag, ps.img.Image); err != nil {
				return nil, fmt.Errorf("recipe %s: chart %s: %w", p.Dir, ps.c.Key, err)
			}
			b.logf("%s: pushed %s@%s", res.Name, ref, ps.img.digest)
			res.Pushed = append(res.Pushed, ref)
		}
		desc, err := partial.Descriptor(ps.img.Image)
		if err != nil {
			return nil, err
		}
		archive, manifest := ps.c.Archive.Digest, ps.img.digest
		if a := ps.adopt; a != nil {
			desc, archive, manifest = a.desc, a.archiveDigest, a.manifest.String()
		}
		res.Charts = append(res.Charts, PublishedChart{Key: ps.c.Key, Repo: ps.repo, Tag: tag, Manifest: *desc})
		repoURL := b.target.Repository(ps.repo)
		chartRefs[ps.c.Key] = &spec.ChartRef{Repository: repoURL, Name: ps.c.Key, Version: version, Digest: archive}
		info.Charts = append(info.Charts, spec.BuiltChart{
			Name: ps.c.Key, Ref: repoURL + "/" + ps.c.Key + ":" + tag, Digest: archive, Manifest: manifest,
			KubeVersion: ps.c.Rendered.KubeVersion, APIVersions: ps.c.Rendered.APIVersions,
		})
	}
	res.Record = Record(r, chartRefs)
	res.Info = info
	if err := b.signCharts(ctx, res); err != nil {
		return nil, fmt.Errorf("recipe %s: %w", p.Dir, err)
	}
	if err := b.writeRecord(res); err != nil {
		return nil, err
	}
	return res, nil
}

type imageWithDigest struct {
	Image  v1.Image
	digest string
}

// Record makes the build record of r whose components point at charts.
func Record(r *recipe.Recipe, charts map[string]*spec.ChartRef) spec.PackageSource {
	pk := r.Spec.Package
	sp := spec.PackageSpec{
		Version:     strings.TrimPrefix(r.Spec.Version, "v"),
		Build:       r.Spec.Build,
		Provides:    pk.Provides,
		Conflicts:   pk.Conflicts,
		CRDs:        pk.CRDs,
		Permissions: pk.Permissions,
		Rollback:    pk.Rollback,
		Images:      pk.Images,
	}
	for _, v := range pk.Variants {
		nv := v
		nv.Components = nil
		for _, c := range v.Components {
			c.Chart = charts[c.Path]
			c.Path = ""
			nv.Components = append(nv.Components, c)
		}
		sp.Variants = append(sp.Variants, nv)
	}
	return spec.PackageSource{
		APIVersion: spec.RecordAPIVersion,
		Kind:       spec.RecordKind,
		Metadata:   spec.RecordMetadata{Name: r.Metadata.Name, Annotations: r.Metadata.Annotations},
		Spec:       sp,
	}
}

func (b *Builder) recipePath(dir string) string {
	if b.root != "" {
		if rel, err := filepath.Rel(b.root, dir); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(filepath.Join(rel, RecipeFile))
		}
	}
	return filepath.Base(filepath.Clean(dir)) + "/" + RecipeFile
}

// writeRecord writes the BuildInfo sidecar, then the record, each through a
// temp file and rename.
func (b *Builder) writeRecord(res *Result) error {
	infoData, err := dist.Marshal(res.Info)
	if err != nil {
		return err
	}
	recData, err := dist.Marshal(res.Record)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(dist.InfoPath(b.out, res.Name, res.Version, res.Build), infoData, 0o644); err != nil {
		return err
	}
	res.RecordFile = dist.RecordPath(b.out, res.Name, res.Version, res.Build)
	return atomicfile.WriteFile(res.RecordFile, recData, 0o644)
}

// Build prepares and publishes each recipe directory, running up to the
// configured number of jobs at once. It returns the results of the recipes
// that succeeded, sorted by directory, and a *BuildErrors for the others.
func (b *Builder) Build(ctx context.Context, dirs []string) ([]*Result, error) {
	results := make([]*Result, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, b.jobs)
	for i, d := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := b.Prepare(ctx, d)
			if err == nil {
				results[i], err = b.Publish(ctx, p)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	var out []*Result
	be := &BuildErrors{}
	for i, d := range dirs {
		if errs[i] != nil {
			be.Failed = append(be.Failed, RecipeError{Dir: d, Err: errs[i]})
		} else {
			out = append(out, results[i])
		}
	}
	be.Total = len(dirs)
	if len(be.Failed) > 0 {
		return out, be
	}
	return out, nil
}

// RecipeError is the failure of one recipe.
type RecipeError struct {
	Dir string
	Err error
}

// BuildErrors lists the recipes of a Build that failed.
type BuildErrors struct {
	Failed []RecipeError
	Total  int
}

func (e *BuildErrors) Error() string {
	return fmt.Sprintf("%d of %d recipes failed", len(e.Failed), e.Total)
}

// makeWorkDir returns the directory to build package name in: under the
// work directory when one is set (made fresh now, and kept afterwards),
// else a temporary one made only if a source or chart needs one (a recipe
// of local charts is built in memory) and removed by remove.
func (b *Builder) makeWorkDir(name string) (*lazyDir, error) {
	if b.workDir == "" {
		return &lazyDir{make: func() (string, error) { return os.MkdirTemp("", "kbuild-"+name+"-") }, temporary: true}, nil
	}
	work := filepath.Join(b.workDir, name)
	if err := os.RemoveAll(work); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	return &lazyDir{path: work, made: true}, nil
}

// lazyDir is a directory made on first use.
type lazyDir struct {
	make      func() (string, error)
	temporary bool // remove removes it

	mu   sync.Mutex
	made bool
	path string
	err  error
}

// get returns the directory, making it the first time.
func (d *lazyDir) get() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.made {
		d.made = true
		d.path, d.err = d.make()
		if d.err != nil {
			d.err = fmt.Errorf("work dir: %w", d.err)
		}
	}
	return d.path, d.err
}

// remove removes a temporary directory that was made.
func (d *lazyDir) remove() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.temporary && d.path != "" {
		_ = os.RemoveAll(d.path)
	}
}
