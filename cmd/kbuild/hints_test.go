package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/sbom"
	"kbuild.dev/kbuild/siteread"
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
	} {
		if tc.err == nil || !strings.HasSuffix(withHint(tc.err).Error(), tc.want) {
			t.Errorf("%s: withHint(%v) = %v, want it to end %q", tc.name, tc.err, withHint(tc.err), tc.want)
		}
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
