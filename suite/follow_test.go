package suite

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"context"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/spec"
)

// fluxSemver is Flux's ref.semver selection (testenv.FluxSemver).
var fluxSemver = testenv.FluxSemver

func TestFluxSemver(t *testing.T) {
	tags := []string{"1.0.0-1", "1.0.0-2", "1.2.0-1", "1.10.0-1", "sha256-abc", "latest", "2.0"}
	for _, tt := range []struct{ constraint, want string }{
		{">=0.0.0-0", "1.10.0-1"},
		{"<1.2.0-0", "1.0.0-2"},
		{"1.0.x-0", "1.0.0-2"},
		{">=1.0.0", ""}, // kbuild's chart versions carry the build as a prerelease
	} {
		got, err := fluxSemver(tags, tt.constraint)
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("fluxSemver(%q) = %q, %v; want %q", tt.constraint, got, err, tt.want)
		}
	}
}

// pushChart pushes a Helm chart image of name at version into repo
// (oci://HOST/PATH) and returns its archive digest.
func pushChart(t *testing.T, repo, chart, version string) string {
	t.Helper()
	archive := []byte("chart " + chart + " " + version)
	sum := sha256.Sum256(archive)
	img, _ := mutate.AppendLayers(empty.Image, static.NewLayer(archive, chartLayerMediaType))
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), "application/vnd.cncf.helm.config.v1+json")
	ref, err := name.NewTag(strings.TrimPrefix(repo, "oci://")+"/"+chart+":"+version, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	return "sha256:" + hex.EncodeToString(sum[:])
}

// suiteIndex is a suite's index holding the given versions of package app
// (chart app in repo) and the withdrawals.
func suiteIndex(t *testing.T, repo string, archives map[string]string, versions []string, withdrawn ...string) *index.RepositoryIndex {
	t.Helper()
	b := index.NewBuilder()
	for _, v := range versions {
		up, _, _ := strings.Cut(v, "-")
		rec := &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind, Metadata: spec.RecordMetadata{Name: "app"},
			Spec: spec.PackageSpec{Version: up, Build: 1, Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{Name: "app",
				Chart: &spec.ChartRef{Repository: repo, Name: "app", Version: v, Digest: archives[v]}}}}}}}
		if err := b.Add("app", rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	data, err := b.Marshal(time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range withdrawn {
		up, _, _ := strings.Cut(w, "-")
		x.Withdrawn = append(x.Withdrawn, index.Withdrawal{Package: "app", Version: up, Build: 1, Reason: "broken"})
	}
	return x
}

// TestFollowSemver: the stable suite's followable repository holds
// exactly the promoted builds, so Flux's ref.semver over it picks the
// newest promoted build (over the chart repository it would pick the
// newest build of all) before a promotion, after it, and after a
// withdrawal; each copy has the digest of the original and carries its
// referrers; a tag moved in the chart repository after signing is not
// copied, and a followable tag is never moved.
func TestFollowSemver(t *testing.T) {
	reg := testenv.Registry(t)
	b := make([]byte, 4)
	rand.Read(b)
	repo := "oci://" + reg + "/f" + hex.EncodeToString(b)
	archives := map[string]string{}
	for _, v := range []string{"1.0.0-1", "1.1.0-1", "1.2.0-1"} {
		archives[v] = pushChart(t, repo, "app", v)
	}
	// A referrer of 1.1.0-1 (a Sigstore bundle, say) that must follow it.
	src, _ := name.NewRepository(strings.TrimPrefix(repo, "oci://")+"/app", name.Insecure)
	d110, err := remote.Head(src.Tag("1.1.0-1"))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := mutate.AppendLayers(empty.Image, static.NewLayer([]byte(`{"sig":1}`), "application/vnd.dev.sigstore.bundle.v0.3+json"))
	ref = mutate.Subject(mutate.MediaType(ref, types.OCIManifestSchema1), *d110).(v1.Image)
	refDigest, _ := ref.Digest()
	if err := remote.Write(src.Digest(refDigest.String()), ref); err != nil {
		t.Fatal(err)
	}

	insecure := FollowOptions{PlainHTTP: func(string) bool { return true }}
	follow, _ := name.NewRepository(strings.TrimPrefix(FollowRepository(repo, "stable", "app"), "oci://"), name.Insecure)
	selects := func(step, want string) {
		t.Helper()
		tags, err := remote.List(follow)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got, err := fluxSemver(tags, ">=0.0.0-0")
		if err != nil || got != want {
			t.Fatalf("%s: Flux's ref.semver >=0.0.0-0 over %s (tags %v) picks %q (%v), want %s", step, follow, tags, got, err, want)
		}
		all, _ := remote.List(src)
		if upstream, _ := fluxSemver(all, ">=0.0.0-0"); upstream != "1.2.0-1" {
			t.Fatalf("over the chart repository it picks %s, want the newest build 1.2.0-1", upstream)
		}
	}

	// stable holds 1.0.0-1.
	res, err := Follow(context.Background(), suiteIndex(t, repo, archives, []string{"1.0.0-1"}), "stable", insecure)
	if err != nil || len(res.Copied) != 1 {
		t.Fatalf("Follow = %+v, %v", res, err)
	}
	selects("before the promotion", "1.0.0-1")

	// 1.1.0-1 is promoted.
	res, err = Follow(context.Background(), suiteIndex(t, repo, archives, []string{"1.0.0-1", "1.1.0-1"}), "stable", insecure)
	if err != nil || len(res.Copied) != 1 || res.Kept != 1 {
		t.Fatalf("Follow after the promotion = %+v, %v", res, err)
	}
	selects("after the promotion", "1.1.0-1")
	got, err := remote.Head(follow.Tag("1.1.0-1"))
	if err != nil || got.Digest != d110.Digest {
		t.Fatalf("the followable 1.1.0-1 is %v (%v), want the chart's manifest %s", got, err, d110.Digest)
	}
	if _, err := remote.Head(follow.Digest(refDigest.String())); err != nil {
		t.Errorf("the referrer of 1.1.0-1 was not copied with it: %v", err)
	}
	idx, err := remote.Referrers(follow.Digest(d110.Digest.String()))
	if m, _ := idx.IndexManifest(); err != nil || len(m.Manifests) != 1 {
		t.Errorf("the followable 1.1.0-1 lists %v referrers (%v), want its one", m, err)
	}

	// 1.1.0-1 is withdrawn.
	res, err = Follow(context.Background(), suiteIndex(t, repo, archives, []string{"1.0.0-1"}, "1.1.0-1"), "stable", insecure)
	if err != nil || len(res.Removed) != 1 {
		t.Fatalf("Follow after the withdrawal = %+v, %v", res, err)
	}
	selects("after the withdrawal", "1.0.0-1")

	// 1.2.0-1 pushed again after signing: the index pins another archive.
	moved := suiteIndex(t, repo, map[string]string{"1.0.0-1": archives["1.0.0-1"], "1.2.0-1": archives["1.1.0-1"]}, []string{"1.0.0-1", "1.2.0-1"})
	if _, err := Follow(context.Background(), moved, "stable", insecure); !errors.Is(err, ErrFollow) || !strings.Contains(err.Error(), "the tag was pushed again after the index was signed") {
		t.Errorf("Follow of a chart whose archive is not the pinned one: %v", err)
	}
	selects("after a refused copy", "1.0.0-1")
	// A followable tag holding another manifest is not moved.
	other, _ := mutate.AppendLayers(empty.Image, static.NewLayer([]byte("other"), chartLayerMediaType))
	if err := remote.Write(follow.Tag("1.2.0-1"), other); err != nil {
		t.Fatal(err)
	}
	if _, err := Follow(context.Background(), suiteIndex(t, repo, archives, []string{"1.0.0-1", "1.2.0-1"}), "stable", insecure); !errors.Is(err, ErrFollow) || !strings.Contains(err.Error(), "a followable tag is never moved") {
		t.Errorf("Follow over a followable tag holding another manifest: %v", err)
	}
}
