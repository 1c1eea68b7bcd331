package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// Result is what a publish signed.
type Result struct {
	// Index is the path of the index written.
	Index              string
	Packages, Versions int
	// Unsigned is true when Index wrote the index without a signature
	// (no signers): kubepkg subscribers accept it only with
	// allowUnsigned, which the caller says.
	Unsigned bool
	// Built are the versions this run built and pushed.
	Built []*builder.Result
	// Left is, after Withdraw, the withdrawn package's versions left in
	// the index (nil when none is).
	Left *index.IndexPackage
}

// errNoSigner is returned by Publish and Withdraw without WithSigners.
var errNoSigner = errors.New("publish needs a signing key")

// Publish builds every recipe under recipesDir that is not published yet
// (all of them WithRebuild), pushes and mirrors, and publishes the site.
// What is signed is the verified base plus what this run built and pushed,
// each new chart's manifest confirmed in the target first; other build
// records left in the build directory are ignored with a warning. With
// nothing new to build, the base is re-signed with a fresh expiry. On any
// error the index and its signature in the site are the previous ones.
func (p *Publisher) Publish(ctx context.Context, recipesDir string) (*Result, error) {
	if p.builder == nil || p.target == nil {
		return nil, errors.New("publish: no builder or no target (WithBuilder, WithTarget)")
	}
	if len(p.signers) == 0 {
		return nil, errNoSigner
	}
	rootData, indexPath, start, unlock, err := p.beginWrite()
	if err != nil {
		return nil, err
	}
	defer unlock()

	// 1. The recipes first: the catalog keeps the published versions of
	// their packages in full while the base is read, in case they change.
	recipes, names, err := p.loadRecipes(recipesDir)
	if err != nil {
		return nil, err
	}
	w := newSiteWriter(p.site)
	cl := newCollector(w, func(name string) bool { return names[name] })

	// 2. The base, verified as a subscriber does.
	b := index.NewBuilder(index.Compact())
	base, err := p.loadBase(ctx, b, cl.visit)
	if err != nil {
		return nil, err
	}
	if base != nil && p.generated.Before(base.Verified.Generated) {
		// The base was re-signed later than this run's SOURCE_DATE_EPOCH
		// (by 'repo withdraw', say): generated must not go back, or
		// subscribers would refuse the index as a rollback.
		p.generated = base.Verified.Generated
	}

	// 3. What is new, built, pushed, mirrored, its provenance written,
	// and every chart confirmed in the target.
	todo, err := p.plan(recipes, b, cl)
	if err != nil {
		return nil, err
	}
	results, err := p.buildAndPush(ctx, w, todo)
	if err != nil {
		return nil, err
	}
	pauseAt("pushed")

	// 4. The index: the base and what was built.
	if err := p.addBuilt(b, cl, results); err != nil {
		return nil, err
	}

	// 5. The site, signed and written atomically.
	pkgs, versions := b.Counts()
	if err := p.writeSite(ctx, w, cl, b, base, results, rootData, indexPath, &start); err != nil {
		return nil, err
	}
	p.removeMarked(w)
	return &Result{Index: indexPath, Packages: pkgs, Versions: versions, Built: results}, nil
}

// recipeAt is a recipe directory and its recipe (nil when it did not
// load; the build then reports why).
type recipeAt struct {
	dir string
	r   *recipe.Recipe
}

// loadRecipes finds and loads the recipes under recipesDir, and the names
// of their packages.
func (p *Publisher) loadRecipes(recipesDir string) ([]recipeAt, map[string]bool, error) {
	dirs, err := builder.FindRecipes([]string{recipesDir})
	if err != nil {
		return nil, nil, err
	}
	var recipes []recipeAt
	names := map[string]bool{}
	for _, d := range dirs {
		l, err := p.builder.Load(d)
		if err != nil {
			return nil, nil, err
		}
		recipes = append(recipes, recipeAt{d, l.Recipe})
		if l.Recipe != nil {
			names[l.Recipe.Metadata.Name] = true
		}
	}
	return recipes, names, nil
}

// plan returns the recipe directories to build: all of them WithRebuild,
// else those whose build the base neither holds nor has withdrawn. A
// recipe whose published build's spec it would change is an error (all of
// them joined).
func (p *Publisher) plan(recipes []recipeAt, b *index.Builder, cl *collector) ([]string, error) {
	var todo []string
	var changed []error
	for _, ra := range recipes {
		d := ra.dir
		if r := ra.r; r != nil && !p.rebuild {
			v := strings.TrimPrefix(r.Spec.Version, "v")
			if t := b.Withdrawn(r.Metadata.Name, v, r.Spec.Build); t != nil {
				p.printf("%s: withdrawn (%s %s build %d: %s); not built", p.display(d), r.Metadata.Name, v, r.Spec.Build, t.Reason)
				continue
			}
			if b.Has(r.Metadata.Name, v, r.Spec.Build) {
				if pub := cl.published(r.Metadata.Name, v, r.Spec.Build); pub != nil {
					if err := builder.SpecChange(r, pub); err != nil {
						changed = append(changed, fmt.Errorf("%s: %w", p.display(d), err))
						continue
					}
				}
				p.printf("%s: up to date (%s %s build %d is published)", p.display(d), r.Metadata.Name, v, r.Spec.Build)
				continue
			}
		}
		todo = append(todo, d)
	}
	if len(changed) > 0 {
		return nil, errors.Join(changed...)
	}
	return todo, nil
}

// buildAndPush builds todo, mirrors the recipes' images (when the target
// is a Mirror), writes the builds' provenance and confirms each new
// chart's manifest in the target.
func (p *Publisher) buildAndPush(ctx context.Context, w *siteWriter, todo []string) ([]*builder.Result, error) {
	var results []*builder.Result
	var err error
	if len(todo) > 0 {
		results, err = p.builder.Build(ctx, todo)
	}
	if err := p.report(results, err); err != nil {
		return nil, err
	}
	if m, ok := p.target.(Mirror); ok {
		if err := p.mirror(ctx, m, results); err != nil {
			return nil, err
		}
	}
	if err := p.provenance(ctx, w, results); err != nil {
		return nil, err
	}
	if err := p.confirmPushed(ctx, results); err != nil {
		return nil, err
	}
	return results, nil
}

// addBuilt adds this run's build records to b and the catalog, and warns
// of the other records left in the build directory.
func (p *Publisher) addBuilt(b *index.Builder, cl *collector, results []*builder.Result) error {
	records := make([]string, len(results))
	inBase := map[string]bool{}
	for i, r := range results {
		records[i] = r.RecordFile
		inBase[dist.Key(r.Name, r.Version, r.Build)] = b.Has(r.Name, r.Version, r.Build)
	}
	if err := cl.addBuilt(results, func(name, version string, build int) bool { return inBase[dist.Key(name, version, build)] }); err != nil {
		return err
	}
	if err := dist.AddRecords(b, records); err != nil {
		return err
	}
	return p.warnStale(b, records)
}

// writeSite signs the index of b, writes the supply chain, keys, root
// chain, scan report and catalog beside it, and commits the signed index
// last (after start, the site's state when the write began). On any
// error the signed index is discarded and the site keeps the previous one.
func (p *Publisher) writeSite(ctx context.Context, w *siteWriter, cl *collector, b *index.Builder, base *siteread.Base, results []*builder.Result, rootData []byte, indexPath string, start *string) error {
	expires := p.expiry(true)
	s, err := prepareSigned(indexPath, b, p.generated, expires, p.signers)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			s.discard()
		}
	}()
	built := map[string]bool{}
	for _, r := range results {
		built[r.Name] = true
	}
	var withdrawn []index.Withdrawal
	if base != nil {
		withdrawn = base.Verified.Withdrawn
	}
	cat := cl.done(p.generated, expires, withdrawn, func(name string) bool { return built[name] })
	if err := p.supplyChain(ctx, w, cat, results, base); err != nil {
		return err
	}
	if err := p.writeKeys(w); err != nil {
		return err
	}
	if err := p.copyRoot(w, rootData); err != nil {
		return err
	}
	if p.scanReport != "" {
		rep, err := os.ReadFile(p.scanReport)
		if err != nil {
			return err
		}
		if err := w.write(sitelayout.ScanFile, rep); err != nil {
			return err
		}
	}
	manifests := map[string]string{}
	for _, r := range results {
		for _, c := range r.Info.Charts {
			manifests[c.Digest] = c.Manifest
		}
	}
	if err := p.catalog(w, cat, manifests); err != nil {
		return err
	}
	committed = true
	return s.commit(start)
}

// loadBase verifies the base into b: WithMerge's, or the index in the
// site, verified with the signing keys (a site without one starts anew).
func (p *Publisher) loadBase(ctx context.Context, b *index.Builder, each func(string, *index.IndexPackage) error) (*siteread.Base, error) {
	ref, allowNew := p.merge, p.allowNew
	if ref == "" {
		ref, allowNew = filepath.Join(p.site, sitelayout.IndexFile), true
	}
	base, err := siteread.LoadBase(ctx, ref, p.baseTrust(), allowNew, b, each, siteread.WithTimeout(p.timeout))
	if err != nil {
		return nil, err
	}
	if base == nil && p.merge != "" {
		fmt.Fprintf(p.stderr, "no published index at %s: starting a new repository, as allowed\n", ref)
	}
	if base != nil {
		for _, w := range base.Verified.Warnings {
			p.warnf("base index: %s", w)
		}
	}
	return base, nil
}

// confirmPushed checks that every chart of this run is in the target
// under its tag with the manifest digest that was built: what is signed
// next must be pullable.
func (p *Publisher) confirmPushed(ctx context.Context, results []*builder.Result) error {
	for _, r := range results {
		for _, c := range r.Charts {
			have, ok, err := p.target.Lookup(ctx, c.Repo, c.Tag)
			ref := p.target.Ref(c.Repo, c.Tag)
			switch {
			case err != nil:
				return fmt.Errorf("%s: confirming chart %s is in the registry: %w; nothing was signed, run the publish again", r.Name, ref, err)
			case !ok:
				return fmt.Errorf("%s: chart %s is not in the registry although it was pushed; nothing was signed, run the publish again", r.Name, ref)
			case have != c.Manifest.Digest:
				return fmt.Errorf("%s: chart %s holds manifest %s, but %s was pushed; nothing was signed", r.Name, ref, have, c.Manifest.Digest)
			}
		}
	}
	return nil
}

// warnStale warns about build records in the build directory that are
// neither built by this run (built) nor in the base: they are not signed.
// Ignoring them, rather than refusing, keeps a build directory that is
// reused between runs (a developer's dist/) usable; nothing of them can
// reach the index.
func (p *Publisher) warnStale(b *index.Builder, built []string) error {
	if p.distDir == "" {
		return nil
	}
	builds, err := dist.Read(p.distDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, d := range builds {
		r := d.Record
		if slices.Contains(built, d.File) || b.Has(r.Metadata.Name, r.Spec.Version, r.Spec.Build) {
			continue
		}
		p.warnf("%s: not built by this publish and not in the published index; ignored, not signed (remove it, or publish its recipe)", d.File)
	}
	return nil
}

// Mirror is a target whose registry also takes the recipes' image
// sources: Publish copies each build's images under Base()/<mirror path>
// (sources.MirrorPath). builder.RegistryTarget is one; a local OCI layout
// is not.
type Mirror interface {
	oci.Target
	// Base returns the registry path images are mirrored under,
	// HOST[/PATH].
	Base() string
}

var _ Mirror = (*oci.RegistryTarget)(nil)

// mirror copies the image sources of the builds into the registry, under
// the mirror path of each original repository.
func (p *Publisher) mirror(ctx context.Context, t Mirror, results []*builder.Result) error {
	for _, r := range results {
		for _, s := range r.Info.Sources {
			if s.Kind != "image" {
				continue
			}
			if p.fetcher == nil {
				return fmt.Errorf("%s: image source %s: no fetcher to mirror it with", r.Name, s.Origin)
			}
			var opts []name.Option
			if p.plainHTTP {
				opts = append(opts, name.Insecure)
			}
			dst, err := name.NewRepository(t.Base()+"/"+sources.MirrorPath(s.Origin), opts...)
			if err != nil {
				return err
			}
			d, err := p.fetcher.Mirror(ctx, s.Origin, dst)
			if err != nil {
				return fmt.Errorf("%s: mirror image %s: %w", r.Name, s.Origin, err)
			}
			p.printf("mirrored %s to %s", s.Origin, d)
		}
	}
	return nil
}

// provenance signs an in-toto statement for each build of this run, writes
// it into the site and attaches it to every chart as an OCI referrer.
func (p *Publisher) provenance(ctx context.Context, w *siteWriter, results []*builder.Result) error {
	id, invocation := provenance.BuilderIdentity(p.getenv)
	for _, r := range results {
		if len(r.Charts) == 0 {
			continue
		}
		f, err := ProvenanceFor(&r.Info, id, invocation, p.epoch, p.signers[0])
		if err != nil {
			return err
		}
		if err := w.write(f.Path, f.Data); err != nil {
			return err
		}
		for _, c := range r.Charts {
			img, err := oci.ReferrerImage(c.Manifest, provenance.ArtifactType, provenance.DSSEEnvelopeMediaType, f.Data, p.epoch)
			if err != nil {
				return err
			}
			if err := p.target.PushReferrer(ctx, c.Repo, img); err != nil {
				return fmt.Errorf("%s: attach provenance to chart %s: %w", r.Name, c.Key, err)
			}
		}
		if err := p.attachCosignProvenance(ctx, r, provenance.New(&r.Info, id, invocation, p.epoch).Predicate); err != nil {
			return err
		}
	}
	return nil
}

// writeKeys publishes the public keys of the signers, and with
// WithKeyless the identity of its certificates.
func (p *Publisher) writeKeys(w *siteWriter) error {
	if p.keyless != nil {
		data, err := json.MarshalIndent(p.keyless.Identity(), "", "  ")
		if err != nil {
			return err
		}
		if err := w.write(sitelayout.KeylessFile, append(data, '\n')); err != nil {
			return err
		}
	}
	for _, k := range p.signers {
		pub := k.Public().PEM()
		if err := w.write(sitelayout.KeyFile(k.KeyID()), pub); err != nil {
			return err
		}
		if len(p.signers) == 1 {
			if err := w.write(sitelayout.SingleKeyFile, pub); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRoot reads the WithRoot file and checks the signers meet its index
// role; nil without a root.
func (p *Publisher) checkRoot() ([]byte, error) {
	if p.root == "" {
		return nil, nil
	}
	_, data, err := LoadRoot(p.root, p.signers)
	return data, err
}

// LoadRoot reads and parses the root of trust in file and checks that the
// signers meet its index role (CheckIndexRole); it returns the root and
// the file's bytes.
func LoadRoot(file string, signers []trust.Signer) (*trust.Root, []byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	r, err := trust.ParseRoot(data)
	if err != nil {
		return nil, nil, fmt.Errorf("root %s: %w", file, err)
	}
	if err := CheckIndexRole(r, file, signers); err != nil {
		return nil, nil, err
	}
	return r, data, nil
}

// copyRoot publishes the root of trust (data is its content): root.yaml
// and root/1.yaml … N.yaml from root/ beside the file.
func (p *Publisher) copyRoot(w *siteWriter, data []byte) error {
	if data == nil {
		return nil
	}
	r, err := trust.ParseRoot(data)
	if err != nil {
		return &InputError{Input: "root", Err: fmt.Errorf("%s: %w", p.root, err)}
	}
	dir := filepath.Join(filepath.Dir(p.root), sitelayout.RootDir)
	for v := 1; v < r.Signed.Version; v++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.yaml", v)))
		if err != nil {
			return &InputError{Input: "root", Err: fmt.Errorf("%s is version %d, and its chain needs %w", p.root, r.Signed.Version, err)}
		}
		if err := w.write(sitelayout.RootVersionFile(v), b); err != nil {
			return err
		}
	}
	if err := w.write(sitelayout.RootVersionFile(r.Signed.Version), data); err != nil {
		return err
	}
	return w.write(sitelayout.RootFile, data)
}

// CheckIndexRole refuses signers that do not meet the index role of root
// (read from file): subscribers would refuse what they sign.
func CheckIndexRole(root *trust.Root, file string, signers []trust.Signer) error {
	role := root.Signed.Roles[trust.RoleIndex]
	n := 0
	for _, s := range signers {
		if slices.Contains(role.KeyIDs, s.KeyID()) {
			n++
		}
	}
	if n < role.Threshold {
		return fmt.Errorf("the signing keys include %d of the index role's keys in %s (version %d), which needs %d: subscribers would refuse the index; sign with the index keys the root lists",
			n, file, root.Signed.Version, role.Threshold)
	}
	return nil
}

// siteWriter writes files into the site through temp files and renames,
// and remembers what it wrote and the build info of each version.
type siteWriter struct {
	dir     string
	written map[string]bool
	info    map[string]*spec.BuildInfo
	// removing are files removed once the index is committed
	// (planRemovals): exists already reports them absent.
	removing map[string]bool
}

func newSiteWriter(dir string) *siteWriter {
	return &siteWriter{dir: dir, written: map[string]bool{}, removing: map[string]bool{}}
}

func (w *siteWriter) write(rel string, data []byte) error {
	if err := atomicfile.WriteFile(w.path(rel), data, 0o644); err != nil {
		return err
	}
	w.written[rel] = true
	return nil
}

func (w *siteWriter) path(rel string) string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }

// exists reports whether the site has the file rel, written by this run
// or before, and keeps it (it is not marked for removal).
func (w *siteWriter) exists(rel string) bool {
	if w.removing[rel] {
		return false
	}
	if w.written[rel] {
		return true
	}
	_, err := os.Stat(w.path(rel))
	return err == nil
}

// now is the clock of expiry checks.
var now = time.Now

// pauseAt is called at the phases of a publish that a crash test kills it
// in; it does nothing outside tests.
var pauseAt = func(phase string) {}

// beginWrite starts a write of the site's index: it checks the root of
// trust against the signers (returning the root to publish, nil without
// one), locks the site against other publishes, removes the temporary
// files a killed one left, makes index.yaml.sig the exact signature of
// index.yaml again if a killed one left them apart (repairPair), and notes the index as it is now (start), which
// the final rename checks is still there. unlock releases the lock.
func (p *Publisher) beginWrite() (rootData []byte, indexPath, start string, unlock func(), err error) {
	if rootData, err = p.checkRoot(); err != nil {
		return nil, "", "", nil, err
	}
	if unlock, err = lockSite(p.site); err != nil {
		return nil, "", "", nil, err
	}
	if removed := removeTemps(p.site); len(removed) > 0 {
		p.warnf("removed %d temporary file(s) an interrupted publish left in %s: %s", len(removed), p.site, strings.Join(removed[:min(len(removed), 5)], ", "))
	}
	if note, err := repairPair(p.site); err != nil {
		unlock()
		return nil, "", "", nil, err
	} else if note != "" {
		p.warnf("%s", note)
	}
	indexPath = filepath.Join(p.site, sitelayout.IndexFile)
	if start, err = fileID(indexPath); err != nil {
		unlock()
		return nil, "", "", nil, err
	}
	return rootData, indexPath, start, unlock, nil
}

// removeTemps removes the temporary files (".NAME.tmp-*", see
// internal/atomicfile) that a killed publish left anywhere in the site:
// beside the index, under by-hash/, provenance/, sbom/, the catalog. It
// runs under the site's lock, so no other publish of this site writes one;
// a directory below that is a site of its own (it has an index: a suite)
// is left to its own publishes.
func removeTemps(site string) []string {
	var removed []string
	filepath.WalkDir(site, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path == site {
				return nil
			}
			if _, err := os.Lstat(filepath.Join(path, sitelayout.IndexFile)); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if isTemp(d.Name()) && os.Remove(path) == nil {
			rel, _ := filepath.Rel(site, path)
			removed = append(removed, filepath.ToSlash(rel))
		}
		return nil
	})
	return removed
}

// isTemp reports whether name is that of a temporary file kbuild writes
// (internal/atomicfile: ".NAME.tmp-RANDOM").
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}
