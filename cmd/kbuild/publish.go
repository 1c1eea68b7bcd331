package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/examples"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/distindex"
	"kbuild.dev/kbuild/internal/fetchsite"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/sources"
)

// throwawayKey is where publish keeps the key it generates when given none,
// inside the build output directory.
const throwawayKey = "throwaway-index.key"

type publishFlags struct {
	buildFlags
	keys signerFlags
	mergeFlags
	site       string
	root       string
	expires    time.Duration
	noExpiry   bool
	rebuild    bool
	scanReport string
	title      string
}

func newPublishCmd() *Command {
	var f publishFlags
	return &Command{
		Name:    "publish",
		Usage:   "kbuild publish [RECIPES_DIR] [--registry oci://HOST/PATH] [--site DIR] [--sign-key FILE]",
		Summary: "Build every recipe, push the charts and publish the signed index, catalog and SBOMs.",
		Help: `publish is the main job. It validates and builds every recipe of RECIPES_DIR in
parallel, pushes the charts (and copies the recipes' image sources) into the
registry, merges the builds into the published index after verifying that
index's signature, signs the new index and writes the site: index.yaml and
index.yaml.sig, the public keys under keys/, root.yaml and root/N.yaml when
--root is given, content-addressed copies under by-hash/sha256/, SBOMs under
sbom/, signed build provenance under provenance/ (also attached to each
chart in the registry as an OCI referrer), and an HTML catalog.

Publishing is incremental and atomic: a recipe whose name@version build N is
already published is not rebuilt ("up to date") unless --rebuild is given,
and then its digests must equal the published ones. Everything is pushed and
every other file is written before index.yaml.sig and index.yaml, which are
replaced last through a rename; a publish that fails leaves the previous
index in place and can be re-run.

The base index is --merge (a file or URL), verified with --merge-public-key
or --merge-root; without --merge, an index already in --site is the base,
verified with the signing keys. A base that is missing is an error unless
--allow-new; a base that fails verification stops the publish. Moving a
repository from kubepkg, --adopt keeps the charts kubepkg pushed under the
same version and build when their files and Chart.yaml meaning are the
same (see 'kbuild build --help').

With no arguments it builds the bundled examples into the local OCI layout
dist/oci and the site _site, signed with a throwaway key kept in
dist/throwaway-index.key; 'kbuild serve' then serves both.

Examples:
  # the bundled examples, no registry and no network
  kbuild publish

  # what CI runs on main
  kbuild publish recipes/ --registry oci://ghcr.io/acme/packages \
    --sign-key-env KBUILD_SIGN_KEY --site _site \
    --merge https://acme.github.io/packages/index.yaml --merge-public-key keys/index.pub`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&f.site, "site", "_site", "directory the site is written to (what Pages serves)")
			f.keys.addFlags(fs, "the index and provenance")
			f.mergeFlags.addFlags(fs)
			fs.StringVar(&f.root, "root", "", "root.yaml to publish beside the index, with root/N.yaml from its directory")
			fs.DurationVar(&f.expires, "expires", 30*24*time.Hour, "how long subscribers accept the index")
			fs.BoolVar(&f.noExpiry, "no-expiry", false, "allow --expires 0 (an index that never expires; not with a root)")
			fs.BoolVar(&f.rebuild, "rebuild", false, "rebuild published versions too; their digests must not change")
			fs.StringVar(&f.scanReport, "scan-report", "", "kbuild scan -o json report to publish as scan.json")
			fs.StringVar(&f.title, "title", "", "title of the catalog (default: kubepkg repository)")
			f.buildFlags.addFlags(fs)
			f.buildFlags.addPublishFlags(fs)
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 1 {
				return usagef("name at most one recipes directory")
			}
			if f.merge != "" && len(f.mergeKeys) == 0 && f.mergeRoot == "" {
				return usagef("--merge needs --merge-public-key or --merge-root: a published index is verified before it is extended")
			}
			if f.expires == 0 && !f.noExpiry {
				return usagef("--expires 0 makes an index that never expires; say --no-expiry too if that is meant")
			}
			return f.run(ctx, env, args)
		},
	}
}

func (f *publishFlags) run(ctx context.Context, env *Env, args []string) error {
	recipesDir := ""
	display := func(dir string) string { return dir }
	if len(args) == 1 {
		recipesDir = args[0]
	} else {
		tmp, err := os.MkdirTemp("", "kbuild-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		recipesDir = filepath.Join(tmp, "examples")
		if err := os.CopyFS(recipesDir, examples.FS); err != nil {
			return err
		}
		display = func(dir string) string { return strings.TrimPrefix(dir, tmp+string(filepath.Separator)) }
		fmt.Fprintln(env.Stderr, "no recipes directory given: publishing the bundled examples")
	}
	signers, err := f.keys.signers(env)
	if err != nil {
		return err
	}
	if len(signers) == 0 {
		k, created, err := throwaway(filepath.Join(f.out, throwawayKey))
		if err != nil {
			return err
		}
		verb := "reusing"
		if created {
			verb = "generated"
		}
		fmt.Fprintf(env.Stderr, "warning: no --sign-key or --sign-key-env: %s the THROWAWAY key %s in %s; subscribers must not trust it beyond this machine\n", verb, k.KeyID(), filepath.Join(f.out, throwawayKey))
		signers = []index.Signer{k}
	}

	var root []byte
	if f.root != "" {
		if root, err = os.ReadFile(f.root); err != nil {
			return err
		}
		r, err := index.ParseRoot(root)
		if err != nil {
			return fmt.Errorf("--root %s: %w", f.root, err)
		}
		if err := checkIndexRole(r, f.root, signers); err != nil {
			return err
		}
	}

	base, baseSite, err := f.base(ctx, env, signers)
	if err != nil {
		return err
	}

	dirs, err := builder.FindRecipes([]string{recipesDir})
	if err != nil {
		return err
	}
	t, err := f.target(env)
	if err != nil {
		return err
	}
	b, err := f.builder(env, t, recipesDir)
	if err != nil {
		return err
	}
	var todo []string
	for _, d := range dirs {
		l, err := b.Load(d)
		if err != nil {
			return err
		}
		if l.Recipe != nil && base != nil && !f.rebuild && published(base.Index, l.Recipe.Metadata.Name, builder.ChartVersion(l.Recipe)) {
			fmt.Fprintf(env.Stdout, "%s: up to date (%s %s build %d is published)\n", display(d), l.Recipe.Metadata.Name, strings.TrimPrefix(l.Recipe.Spec.Version, "v"), l.Recipe.Spec.Build)
			continue
		}
		todo = append(todo, d)
	}
	results, err := b.Build(ctx, todo)
	if err := (&reporter{env: env}).builds(results, err, display, "; nothing was published"); err != nil {
		return err
	}

	// Images of the recipes' image sources go into the registry too.
	if rt, ok := t.(*builder.RegistryTarget); ok {
		if err := f.mirror(ctx, env, rt, results); err != nil {
			return err
		}
	}

	now := time.Now().UTC().Truncate(time.Second)
	generated := now
	if env.Getenv("SOURCE_DATE_EPOCH") != "" {
		if generated, err = builder.SourceDateEpoch(env.Getenv); err != nil {
			return err
		}
	}
	built, err := distindex.Build(ctx, f.out, generated)
	if err != nil {
		return err
	}
	idx := built
	if base != nil {
		if idx, err = index.Merge(base, built); err != nil {
			return err
		}
	}
	if f.expires > 0 {
		idx.Expires = generated.Add(f.expires)
	}
	data, err := idx.Marshal()
	if err != nil {
		return err
	}
	sigData, err := signatureFile(data, signers)
	if err != nil {
		return err
	}

	w := &siteWriter{dir: f.site}
	builds, err := dist.Read(f.out)
	if err != nil {
		return err
	}
	if err := f.provenance(ctx, env, w, t, results, signers[0]); err != nil {
		return err
	}
	if err := f.supplyChain(ctx, w, idx, builds, baseSite); err != nil {
		return err
	}
	for _, k := range signers {
		pub := publicOf(k).PEM()
		if err := w.write("keys/"+k.KeyID()+".pub", pub); err != nil {
			return err
		}
		if len(signers) == 1 {
			if err := w.write("keys/index.pub", pub); err != nil {
				return err
			}
		}
	}
	if err := f.copyRoot(w, root); err != nil {
		return err
	}
	if f.scanReport != "" {
		rep, err := os.ReadFile(f.scanReport)
		if err != nil {
			return err
		}
		if err := w.write("scan.json", rep); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{data, sigData} {
		sum := sha256.Sum256(b)
		if err := w.write("by-hash/sha256/"+hex.EncodeToString(sum[:]), b); err != nil {
			return err
		}
	}
	manifests := map[string]string{}
	for _, b := range builds {
		if b.Info != nil {
			for _, c := range b.Info.Charts {
				manifests[c.Digest] = c.Manifest
			}
		}
	}
	keyOpt, err := f.siteKeys(root, signers)
	if err != nil {
		return err
	}
	opts := []site.Option{site.WithPublished(w.files...), site.WithManifestDigests(manifests), keyOpt}
	if f.title != "" {
		opts = append(opts, site.WithTitle(f.title))
	}
	if err := site.Write(f.site, idx, opts...); err != nil {
		return err
	}
	// Last, the signature and the index, each replaced through a rename.
	if err := w.write("index.yaml.sig", sigData); err != nil {
		return err
	}
	if err := w.write("index.yaml", data); err != nil {
		return err
	}
	pkgs, versions := idx.Counts()
	fmt.Fprintf(env.Stdout, "wrote %s: %d packages, %d versions\n", filepath.Join(f.site, "index.yaml"), pkgs, versions)
	for _, s := range signers {
		fmt.Fprintf(env.Stdout, "signed %s (keyid %s)\n", filepath.Join(f.site, "index.yaml.sig"), s.KeyID())
	}
	return nil
}

// published reports whether name at chart version v (version-build) is in x.
func published(x *index.RepositoryIndex, name, v string) bool {
	p := x.Packages[name]
	if p == nil {
		return false
	}
	for _, pv := range p.Versions {
		if fmt.Sprintf("%s-%d", pv.Version, pv.Build) == v {
			return true
		}
	}
	return false
}

// base returns the verified index to merge into, or nil for a new one, and
// the site it came from.
func (f *publishFlags) base(ctx context.Context, env *Env, signers []index.Signer) (*index.Verified, *fetchsite.Site, error) {
	ref := f.merge
	if ref == "" {
		ref = filepath.Join(f.site, "index.yaml")
	}
	s, err := fetchsite.New(ref)
	if err != nil {
		return nil, nil, err
	}
	// Without --merge flags, the index in --site is verified with the
	// signing keys: only what we signed is extended.
	trust := &index.Trust{}
	if f.merge != "" {
		if trust, err = f.mergeTrust(signers); err != nil {
			return nil, nil, err
		}
	} else {
		for _, k := range signers {
			trust.IndexKeys = append(trust.IndexKeys, publicOf(k))
		}
	}
	v, err := s.Verify(ctx, trust, index.VerifyOptions{Now: time.Now(), AllowExpired: true})
	if errors.Is(err, fetchsite.ErrNotFound) {
		if f.merge != "" && !f.allowNew {
			return nil, nil, fmt.Errorf("no published index at %s; check the URL, or pass --allow-new to start a new repository", s.Location(s.IndexName()))
		}
		return nil, nil, nil
	}
	var ve *index.VerificationError
	if errors.As(err, &ve) {
		return nil, nil, fmt.Errorf("the published index %s failed verification, so nothing was published: %w", s.Location(s.IndexName()), err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the published index: %w", err)
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(env.Stderr, "warning: base index: %s\n", w)
	}
	return v, s, nil
}

// mirror copies the image sources of the builds into the registry, under
// the mirror path of each original repository.
func (f *publishFlags) mirror(ctx context.Context, env *Env, t *builder.RegistryTarget, results []*builder.Result) error {
	fetch, err := f.fetcher(env)
	if err != nil {
		return err
	}
	for _, r := range results {
		for _, s := range r.Info.Sources {
			if s.Kind != "image" {
				continue
			}
			opts := []name.Option{}
			if f.plainHTTP {
				opts = append(opts, name.Insecure)
			}
			dst, err := name.NewRepository(t.Base()+"/"+sources.MirrorPath(s.Origin), opts...)
			if err != nil {
				return err
			}
			d, err := fetch.Mirror(ctx, s.Origin, dst)
			if err != nil {
				return fmt.Errorf("%s: mirror image %s: %w", r.Name, s.Origin, err)
			}
			fmt.Fprintf(env.Stdout, "mirrored %s to %s\n", s.Origin, d)
		}
	}
	return nil
}

// provenance signs an in-toto statement for each build of this run, writes
// it into the site and attaches it to every chart as an OCI referrer.
func (f *publishFlags) provenance(ctx context.Context, env *Env, w *siteWriter, t builder.Target, results []*builder.Result, signer index.Signer) error {
	epoch, err := builder.SourceDateEpoch(env.Getenv)
	if err != nil {
		return err
	}
	id, invocation := builder.BuilderIdentity(env.Getenv)
	for _, r := range results {
		if len(r.Charts) == 0 {
			continue
		}
		env, err := builder.SignStatement(builder.Provenance(&r.Info, id, invocation, epoch), signer)
		if err != nil {
			return err
		}
		if err := w.write("provenance/"+dist.Key(r.Name, r.Version, r.Build)+".intoto.json", env); err != nil {
			return err
		}
		for _, c := range r.Charts {
			img, err := builder.ReferrerImage(c.Manifest, builder.ProvenanceArtifactType, builder.DSSEEnvelopeMediaType, env, epoch)
			if err != nil {
				return err
			}
			if err := t.PushReferrer(ctx, c.Repo, img); err != nil {
				return fmt.Errorf("%s: attach provenance to chart %s: %w", r.Name, c.Key, err)
			}
		}
	}
	return nil
}

// supplyChain writes the build info, SBOM and provenance of every version
// of idx: from this run's build output, or copied from the base site.
func (f *publishFlags) supplyChain(ctx context.Context, w *siteWriter, idx *index.RepositoryIndex, builds []dist.Build, baseSite *fetchsite.Site) error {
	local := map[string]dist.Build{}
	for _, b := range builds {
		local[dist.Key(b.Record.Metadata.Name, b.Record.Spec.Version, b.Record.Spec.Build)] = b
	}
	var all []sbom.Build
	for _, pkgName := range slices.Sorted(maps.Keys(idx.Packages)) {
		p := idx.Packages[pkgName]
		for _, v := range p.Versions {
			key := dist.Key(pkgName, v.Version, v.Build)
			sb := sbom.Build{Name: pkgName, Description: p.Description, Home: p.Home, Spec: v.Spec, Digest: v.Digest}
			if b, ok := local[key]; ok && b.Info != nil {
				sb.Info = b.Info
				info, err := dist.Marshal(b.Info)
				if err != nil {
					return err
				}
				if err := w.write("build/"+key+".build.yaml", info); err != nil {
					return err
				}
			}
			// What this run did not make comes from the published site.
			for _, file := range []string{"build/" + key + ".build.yaml", "provenance/" + key + ".intoto.json"} {
				if w.has(file) || baseSite == nil {
					continue
				}
				data, err := baseSite.Fetch(ctx, file, 16<<20)
				if errors.Is(err, fetchsite.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if err := w.write(file, data); err != nil {
					return err
				}
				if strings.HasSuffix(file, ".build.yaml") {
					sb.Info = new(index.BuildInfo)
					if err := dist.Unmarshal(data, sb.Info); err != nil {
						return fmt.Errorf("%s: %w", baseSite.Location(file), err)
					}
				}
			}
			bom, err := sbom.ForBuild(ctx, sb, sbom.WithTimestamp(idx.Generated), sbom.WithTool("kbuild", version))
			if err != nil {
				return err
			}
			data, err := sbom.Marshal(bom)
			if err != nil {
				return err
			}
			if err := w.write("sbom/"+key+".cdx.json", data); err != nil {
				return err
			}
			all = append(all, sb)
		}
	}
	bom, err := sbom.ForRepository(ctx, "index.yaml", all, sbom.WithTimestamp(idx.Generated), sbom.WithTool("kbuild", version))
	if err != nil {
		return err
	}
	data, err := sbom.Marshal(bom)
	if err != nil {
		return err
	}
	return w.write(sbom.RepositoryBOMFile, data)
}

// copyRoot publishes the root of trust given as --root (data is its
// content): root.yaml and root/1.yaml … N.yaml from root/ beside it.
func (f *publishFlags) copyRoot(w *siteWriter, data []byte) error {
	if data == nil {
		return nil
	}
	r, err := index.ParseRoot(data)
	if err != nil {
		return fmt.Errorf("--root %s: %w", f.root, err)
	}
	dir := filepath.Join(filepath.Dir(f.root), "root")
	for v := 1; v < r.Signed.Version; v++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.yaml", v)))
		if err != nil {
			return fmt.Errorf("--root %s is version %d, and its chain needs %w", f.root, r.Signed.Version, err)
		}
		if err := w.write(fmt.Sprintf("root/%d.yaml", v), b); err != nil {
			return err
		}
	}
	if err := w.write(fmt.Sprintf("root/%d.yaml", r.Signed.Version), data); err != nil {
		return err
	}
	return w.write("root.yaml", data)
}

// siteKeys returns the keys the catalog's Repository snippet pins: the
// root keys of version 1 of the root (root/1.yaml beside --root) with
// their threshold, or else the public keys of the signers.
func (f *publishFlags) siteKeys(root []byte, signers []index.Signer) (site.Option, error) {
	if root == nil {
		var pems []string
		for _, s := range signers {
			pems = append(pems, string(publicOf(s).PEM()))
		}
		return site.WithPublicKeys(pems...), nil
	}
	r, err := index.ParseRoot(root)
	if err == nil && r.Signed.Version != 1 {
		var first []byte
		if first, err = os.ReadFile(filepath.Join(filepath.Dir(f.root), "root", "1.yaml")); err == nil {
			r, err = index.ParseRoot(first)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--root %s: the catalog pins version 1 of the root: %w", f.root, err)
	}
	role := r.Signed.Roles[index.RoleRoot]
	var pems []string
	for _, id := range role.KeyIDs {
		pems = append(pems, r.Signed.Keys[id])
	}
	return site.WithRootKeys(role.Threshold, pems...), nil
}

// siteWriter writes files into the site through temp files and renames,
// and remembers what it wrote.
type siteWriter struct {
	dir   string
	files []string
}

func (w *siteWriter) write(rel string, data []byte) error {
	if err := dist.WriteFile(filepath.Join(w.dir, filepath.FromSlash(rel)), data, 0o644); err != nil {
		return err
	}
	w.files = append(w.files, rel)
	return nil
}

func (w *siteWriter) has(rel string) bool {
	for _, f := range w.files {
		if f == rel {
			return true
		}
	}
	return false
}

// throwaway loads the key at path, or generates one there (0600).
func throwaway(path string) (k *index.PrivateKey, created bool, err error) {
	if data, err := os.ReadFile(path); err == nil {
		k, err := index.ParsePrivateKey(data)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return k, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	if k, err = index.GenerateKey(rand.Reader); err != nil {
		return nil, false, err
	}
	pem, err := k.MarshalPEM()
	if err != nil {
		return nil, false, err
	}
	if err := dist.WriteFile(path, pem, 0o600); err != nil {
		return nil, false, err
	}
	return k, true, nil
}

// publicOf returns a signer's public key.
func publicOf(s index.Signer) *index.PublicKey {
	return s.(interface{ Public() *index.PublicKey }).Public()
}
