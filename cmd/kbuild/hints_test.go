package main

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/recipe/draft"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/trust"
	"kbuild.dev/kbuild/watch"
)

// TestHints checks what the command line says about errors of the
// libraries, which name their inputs and no flags: the text users saw
// before the hints left the libraries.
func TestHints(t *testing.T) {
	k, err := trust.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, noBase := siteread.LoadBase(ctx, filepath.Join(t.TempDir(), "index.yaml"), trust.SignedBy(k), false, index.NewBuilder(), nil)
	_, unverified := siteread.LoadBuilds(ctx, "https://example.com/index.yaml", nil, siteread.BuildsOptions{})
	dir := t.TempDir()
	root, err := trust.NewRoot(trust.RootConfig{RootKeys: []*trust.PublicKey{k.Public()}, RootThreshold: 1, IndexKeys: []*trust.PublicKey{k.Public()}, IndexThreshold: 1, Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := siteread.WriteRootVersion(filepath.Join(dir, "root.yaml"), root, true); err != nil {
		t.Fatal(err)
	}
	_, rootExists := siteread.WriteRootVersion(filepath.Join(dir, "root.yaml"), root, true)
	_, notKey := trust.ParsePublicKey([]byte("hello"))
	_, noRoot := evidence.Verify([]byte("{}"), nil, nil, time.Now())
	_, _, noQA := evidence.CheckQASigners(root, "root.yaml", nil)
	_, offline := watch.NewLooker(watch.WithOffline(true)).Lookup(ctx, watch.Upstream{})
	_, noTrivy := sbom.NewTrivy(sbom.WithTrivyPath(filepath.Join(dir, "no-trivy")))
	_, notBuilds := siteread.LoadBuilds(ctx, filepath.Join(dir, "no-dist"), nil, siteread.BuildsOptions{})
	emptyDist := t.TempDir()
	_, noRecords := siteread.LoadBuilds(ctx, emptyDist, nil, siteread.BuildsOptions{})
	_, zeroBuild := evidence.ParseTarget("foreman@3.15.0", 0)
	_, noRelease := draft.Write(ctx, filepath.Join(dir, "draft"), draft.Request{}, draft.Tools{})
	_, noVersion := draft.Write(ctx, filepath.Join(dir, "draft"), draft.Request{Manifests: []string{"https://x.example/a.yaml"}}, draft.Tools{})
	_, badChart := draft.Write(ctx, filepath.Join(dir, "draft"), draft.Request{Chart: "redis@7.2.4"}, draft.Tools{})
	cfg, err := root.Config()
	if err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(time.Hour)
	noDelegation := trust.RootEdit{DelegateThresholds: []string{"team-db=2"}, Expires: expires}.Apply(&cfg, false)
	badDelegate := trust.RootEdit{Delegate: []string{"team-db"}, Expires: expires}.Apply(&cfg, false)
	undelegate := trust.RootEdit{Undelegate: []string{"team-db"}, Expires: expires}.Apply(&cfg, false)
	notCached := func(nc sources.NotCachedError) error {
		nc.What, nc.Cache = "git https://example.com/r.git@abc", "/cache"
		return fmt.Errorf("source s: %w", &nc)
	}
	refused := func(what string, kind error) error {
		return &trust.VerificationError{What: what, Err: kind, Detail: "it failed"}
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no base", noBase, "does not exist; check the URL, or pass --allow-new to start a new repository (only for the first publication; KBUILD_ALLOW_NEW=1 does the same)"},
		{"index without keys", unverified, "needs --public-key FILE or --root-key FILE"},
		{"not a key", notKey, `no PEM "PUBLIC KEY" block found: not an ed25519 key in PEM, the kind kbuild makes; create keys with 'kbuild repo keygen'`},
		{"evidence without a root", noRoot, "publish with --root"},
		{"a root without qa role", noQA, "has no qa role: no evidence would count; add one with 'kbuild trust root next ROOT.yaml --qa-key FILE'"},
		{"offline look-up", offline, "looking upstream needs the network; run it without --offline"},
		{"no trivy", noTrivy, "then put it on PATH; or pass its path with --trivy"},
		{"a set without the index", fmt.Errorf("recipe r is a release set: %w", bump.ErrSetNeedsIndex), "; give the published index (--index REF with --public-key or --root-key)"},
		{"a tag published by another tool", fmt.Errorf("chart c: %w (published manifest m): %w", builder.ErrImmutable, builder.ErrAdoptable), "another tool such as kubepkg may have published it; --adopt keeps it when its files are the same"},
		{"another kbuild", fmt.Errorf("x was %w, rebuild with that kbuild", review.ErrOtherKbuild), "rebuild with that kbuild; or pass --other-kbuild to compare anyway"},
		{"no vulnerability DB", fmt.Errorf("scan: %w: exit status 1", sbom.ErrDBFetch), "fetching the vulnerability database: exit status 1; use --trivy-offline with --trivy-cache-dir to scan with one already there"},
		{"a stalled download", fmt.Errorf("GET u: no data for 1s after 0 bytes: %w; the server stopped sending", netdeadline.ErrStalled), "transfer stalled; the server stopped sending; raise --timeout if it is only slow"},
		{"keep from another registry", fmt.Errorf("chart c: %w", publish.ErrOtherRegistry), "; publish to that registry, or keep every version's files (--site-keep 0)"},
		{"a root where one is", rootExists, "refusing to overwrite a root of trust; use 'kbuild trust root next' to change it"},
		{"offline fetch", notCached(sources.NotCachedError{Recipe: "recipes/r"}), "offline: git https://example.com/r.git@abc is not in the cache /cache; fetch it while online with: kbuild fetch recipes/r"},
		{"offline pin, nothing recorded", notCached(sources.NotCachedError{Pinning: true, Unrecorded: true}), "is not in the cache /cache (nothing records its digest); pin it once without --offline (kbuild init), kbuild fetch a recipe that pins it, or, for a url downloaded by other means, kbuild cache add --url URL FILE"},
		{"offline pin", notCached(sources.NotCachedError{Pinning: true}), "is not in the cache /cache; pin it once without --offline"},
		{"offline chart index", notCached(sources.NotCachedError{}), "is not in the cache /cache; run once without --offline"},
		{"a kube version the chart excludes", &render.KubeVersionError{Chart: "c", Constraint: ">=1.30", Requested: "v1.29.0"}, `chart c requires kubeVersion ">=1.30", which Kubernetes v1.29.0 does not satisfy; pick a version in that range with --kube-version`},
		{"a chart no kube version satisfies", &render.KubeVersionError{Chart: "c", Constraint: ">=2.0.0"}, "satisfies; render it with --kube-version"},
		{"a step plugin that hangs", fmt.Errorf("step s: kubepkg-step-x: %w: it did not finish within 500ms", builder.ErrPluginTimeout), "step plugin timed out: it did not finish within 500ms; raise --plugin-timeout if it is only slow"},
		{"a delegation the root lacks", noDelegation, "--delegate-threshold team-db=2: no delegation team-db; add it with --delegate team-db=PATTERN"},
		{"a malformed delegation", badDelegate, `--delegate "team-db": want NAME=PATTERN[,PATTERN]`},
		{"undelegating what is not there", undelegate, "--undelegate team-db: the root has no such delegation"},
		{"a relocation of a signed version", fmt.Errorf("base index: %w: a 1.0 build 1 carries delegated signatures", index.ErrSignedRelocation), "refusing to relocate: a 1.0 build 1 carries delegated signatures; leave that repository out of --relocate"},
		{"an expired root", refused("root.yaml", trust.ErrRootExpired), "root.yaml: it failed; 'kbuild trust root next' writes it"},
		{"a root the previous keys did not sign", refused("root/2.yaml", trust.ErrRootNotSigned), "it failed; they sign it with 'kbuild trust root sign'"},
		{"an expired index", refused("index.yaml", trust.ErrIndexExpired), "it failed; 'kbuild repo index --index' signs it again"},
		{"an index that never expires", refused("index.yaml", trust.ErrNoExpiry), "it failed; publish it with --expires"},
		{"an index without index-key signatures", refused("index.yaml", trust.ErrIndexNotSigned), "it failed; kbuild publish --sign-key FILE signs it"},
		{"a base too large to keep", refused("index.yaml", trust.ErrBaseTooLarge), "it failed; 'kbuild repo index --index' streams the base"},
		{"not a dist directory", notBuilds, "expected a dist directory or an index.yaml; a dist directory is what kbuild build -o DIST writes"},
		{"an empty dist directory", noRecords, "has no build records (<name>-<version>-<build>.yaml); run kbuild build -o " + emptyDist + " first"},
		{"build 0", zeroBuild, "--build 0 of foreman@3.15.0: must be 1 or more"},
		{"init without a release", noRelease, "give either a chart or manifests; pass --chart REPO/NAME@VERSION or --manifest URL"},
		{"init of manifests without version", noVersion, "manifests need a version, the upstream release; give it with --version"},
		{"init of a chart without repository", badChart, `--chart "redis@7.2.4": expected REPO/NAME@VERSION, e.g. https://charts.example.com/redis@7.2.4`},
		{"no recipe.yaml", fmt.Errorf("d: no recipe.yaml; %w", builder.ErrNoRecipe), "no recipe.yaml; a recipe directory holds recipe.yaml; kbuild init writes one"},
		{"an edited index", fmt.Errorf("x: published digest d %w: expected d, got e; the index was edited or corrupted", sbom.ErrIndexDigest), "x: published digest d does not match its spec: expected d, got e; the index was edited or corrupted; write it again with kbuild repo index"},
		{"a component not built", fmt.Errorf("x: variant \"default\" component \"c\" uses path \"p\"; %w", index.ErrUnbuiltComponent), "uses path \"p\"; in a repository every component names a chart pinned by digest; build the recipe with 'kbuild build'"},
		{"a keyless bundle without a trusted root", fmt.Errorf("chart c: %w", bundle.ErrNoTrustedRoot), "no Sigstore trusted root to verify it; bundle create takes one with --trusted-root"},
	} {
		if tc.err == nil || !strings.HasSuffix(withHint(tc.err).Error(), tc.want) {
			t.Errorf("%s: withHint(%v) = %v, want it to end %q", tc.name, tc.err, withHint(tc.err), tc.want)
		}
	}
	// A hint that used to stand before the library's cause stays there.
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not in git", fmt.Errorf("virt-stack is not in a git work tree, so there is %w: %w", review.ErrNoGitBase, errors.New("git rev-parse: exit status 128")),
			"virt-stack is not in a git work tree, so there is no base to compare with; use --index REF: git rev-parse: exit status 128"},
		{"no offline vulnerability DB", &sbom.TrivyError{Image: "i", Args: []string{"trivy", "image"}, Err: errors.New("exit status 1"), Cause: sbom.ErrNoDB},
			"trivy on image i: exit status 1; offline, and there is no vulnerability DB in the cache directory; scan once without --trivy-offline, or run trivy image --download-db-only with --cache-dir set to the --trivy-cache-dir; the command was: trivy image"},
		{"a partial image index", fmt.Errorf("the mirror refuses image index d: the bundle holds 1 of its 2 images: %w: %w", bundle.ErrPartialIndex, errors.New("400 Bad Request")),
			"the mirror refuses image index d: the bundle holds 1 of its 2 images: a partial image index; it was made with --platform: make the bundle without --platform for this mirror: 400 Bad Request"},
	} {
		got := withHint(tc.err)
		if !strings.HasPrefix(got.Error(), tc.want) || !errors.Is(got, tc.err) {
			t.Errorf("%s: withHint(%v) = %v, want it to start %q and wrap the error", tc.name, tc.err, got, tc.want)
		}
	}
	// Errors joined each get their hint, as each said it before.
	joined := errors.Join(notCached(sources.NotCachedError{Pinning: true}), notCached(sources.NotCachedError{Recipe: "r"}))
	if got, n := withHint(joined).Error(), strings.Count(withHint(joined).Error(), "; "); !strings.Contains(got, "pin it once without --offline\n") || !strings.HasSuffix(got, "kbuild fetch r") || n != 2 {
		t.Errorf("withHint(two joined errors) = %q, want each with its own hint", got)
	}
	// So do errors joined below a line of context (builder's "N of M
	// sources failed:").
	wrapped := fmt.Errorf("2 of 2 sources failed:\n%w", joined)
	if got := withHint(wrapped).Error(); !strings.HasPrefix(got, "2 of 2 sources failed:\nsource s: offline:") || !strings.Contains(got, "pin it once without --offline\n") || !strings.HasSuffix(got, "kbuild fetch r") || !errors.Is(withHint(wrapped), sources.ErrOffline) {
		t.Errorf("withHint(joined errors below a line) = %q, want each with its own hint after the line", got)
	}
	// An error about one input is about its flag.
	_, badEnv := evidence.ParseEnv("kubernetes=1.33,kubernetes=1.34")
	if got, want := withHint(badEnv).Error(), `--env "kubernetes=1.33,kubernetes=1.34": kubernetes given twice`; got != want {
		t.Errorf("withHint(ParseEnv error) = %q, want %q", got, want)
	}
	if got, want := withHint(fmt.Errorf("reading: %w", badEnv)).Error(), `reading: env "kubernetes=1.33,kubernetes=1.34": kubernetes given twice`; got != want {
		t.Errorf("withHint(a wrapped ParseEnv error) = %q, want %q (no flag put before the context)", got, want)
	}
	if withHint(nil) != nil {
		t.Errorf("withHint(nil) = %v, want nil", withHint(nil))
	}
}

// TestLibrariesNameNoFlags holds the rule the hints table serves: a
// library's errors, warnings and notices name their inputs, never a flag
// of kbuild's; the command line says which flag to pass (hints).
// Documents for people are exempt: the catalog (site/), whose snippets
// are command lines subscribers copy, and the draft recipe kbuild init
// writes (recipe/draft/), whose comments say what to run next; so are
// programs with flags of their own (bench/).
func TestLibrariesNameNoFlags(t *testing.T) {
	flag := regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]*)`)
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case "cmd", "tools", "scripts", "bench", "site", filepath.Join("recipe", "draft"), ".git", ".cache":
				return filepath.SkipDir
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !strings.Contains(s, " ") { // a lone "--format" is an argument of a program run
				return true
			}
			for _, m := range flag.FindAllStringSubmatch(s, -1) {
				if _, ok := vocabulary[m[1]]; ok {
					t.Errorf("%s: %q names kbuild's flag --%s: name the input, and give the hint in cmd/kbuild/hints.go", fset.Position(lit.Pos()), s, m[1])
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d library files; is the module root %s?", checked, root)
	}
}
