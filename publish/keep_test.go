package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/spec"
)

// TestSiteKeep publishes 12 versions of a package with --site-keep 10
// into the real registry: 11 in one run (the oldest loses its files in
// the run that built it), then the 12th (the second oldest loses its
// files, written by an earlier run). The two oldest keep their build
// info and their place in the index; their SBOM and provenance are OCI
// referrers of their charts, as every version's are; sbom.cdx.json and
// the pages link nothing the site lacks.
func TestSiteKeep(t *testing.T) {
	f := newFixture(t)
	version := func(i int) string { return fmt.Sprintf("1.%d.0", i) }
	for i := 1; i <= 11; i++ {
		f.recipe("alpha", version(i), 1)
		if err := os.Rename(filepath.Join(f.work, "recipes", "alpha"), filepath.Join(f.work, "recipes", "alpha-"+version(i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.publish("site", nil, WithSiteKeep(10)); err != nil {
		t.Fatalf("publish of 11 versions: %v\n%s", err, &f.stderr)
	}
	siteDir := filepath.Join(f.work, "site")
	second := sitelayout.SBOMFile("alpha", version(2), 1)
	secondSBOM, err := os.ReadFile(filepath.Join(siteDir, filepath.FromSlash(second)))
	if err != nil {
		t.Fatalf("after the first publish the 10th newest version keeps its SBOM: %v", err)
	}
	f.recipe("alpha", version(12), 1)
	if _, err := f.publish("site", nil, WithSiteKeep(10)); err != nil {
		t.Fatalf("publish of the 12th version: %v\n%s", err, &f.stderr)
	}
	if !strings.Contains(f.stderr.String(), "removed 2 SBOM and provenance files") {
		t.Errorf("the second publish does not say it removed the two files of %s:\n%s", version(2), &f.stderr)
	}

	x := f.verified("site")
	if n := len(x.Packages["alpha"].Versions); n != 12 {
		t.Fatalf("the index holds %d versions of alpha, want 12", n)
	}
	for i := 1; i <= 12; i++ {
		v := version(i)
		pruned := i <= 2
		for _, file := range []string{sitelayout.SBOMFile("alpha", v, 1), sitelayout.ProvenanceFile("alpha", v, 1)} {
			_, err := os.Stat(filepath.Join(siteDir, filepath.FromSlash(file)))
			if pruned && err == nil {
				t.Errorf("%s is in the site, want it removed (older than the newest 10)", file)
			}
			if !pruned && err != nil {
				t.Errorf("%s: %v, want it kept", file, err)
			}
		}
		info := readBuildInfo(t, siteDir, "alpha", v)
		sbomData, _ := os.ReadFile(filepath.Join(siteDir, filepath.FromSlash(sitelayout.SBOMFile("alpha", v, 1))))
		if i == 2 {
			sbomData = secondSBOM
		}
		for _, c := range info.Charts {
			layers := referrerLayers(t, c)
			if len(layers[SBOMArtifactType]) != 1 || len(layers[provenance.ArtifactType]) != 1 {
				t.Errorf("alpha %s: chart %s has %d SBOM and %d provenance referrers, want one each", v, c.Ref, len(layers[SBOMArtifactType]), len(layers[provenance.ArtifactType]))
				continue
			}
			got := layers[SBOMArtifactType][0]
			if sbomData != nil && !bytes.Equal(got, sbomData) {
				t.Errorf("alpha %s: the SBOM referrer of %s differs from the site's SBOM", v, c.Ref)
			}
			if !bytes.Contains(got, []byte(`"version":"`+v+`"`)) {
				t.Errorf("alpha %s: the SBOM referrer of %s is not about this version: %.200s", v, c.Ref, got)
			}
		}
	}
	checkSiteLinks(t, siteDir)

	// The repository SBOM references the two oldest through their charts.
	var bom struct {
		Components []struct {
			Name, Version      string
			ExternalReferences []struct{ URL, Type string } `json:"externalReferences"`
		} `json:"components"`
	}
	data, err := os.ReadFile(filepath.Join(siteDir, sitelayout.RepositoryBOMFile))
	if err != nil || json.Unmarshal(data, &bom) != nil {
		t.Fatalf("%s: %v", sitelayout.RepositoryBOMFile, err)
	}
	viaRegistry := 0
	for _, c := range bom.Components {
		for _, r := range c.ExternalReferences {
			if strings.HasPrefix(r.URL, "oci://") {
				viaRegistry++
				if c.Version != version(1) && c.Version != version(2) {
					t.Errorf("%s references %s %s through the registry although the site keeps its SBOM", sitelayout.RepositoryBOMFile, c.Name, c.Version)
				}
			}
		}
	}
	if viaRegistry != 2 {
		t.Errorf("%s references %d versions through the registry, want the 2 oldest", sitelayout.RepositoryBOMFile, viaRegistry)
	}

	// oras, as a reader would, lists the SBOM of a version the site no
	// longer holds.
	oras := testenv.Tool(t, "oras")
	c := readBuildInfo(t, siteDir, "alpha", version(1)).Charts[0]
	subject := strings.TrimPrefix(c.Ref[:strings.LastIndexByte(c.Ref, ':')], "oci://") + "@" + c.Manifest
	out, err := exec.Command(oras, "discover", "--plain-http", "--format", "tree", subject).CombinedOutput()
	if err != nil || !strings.Contains(string(out), SBOMArtifactType) {
		t.Errorf("oras discover %s: %v, want an %s referrer:\n%s", subject, err, SBOMArtifactType, out)
	}
	// and fetches the SBOM of 1.2.0, byte for byte the file the site held.
	c = readBuildInfo(t, siteDir, "alpha", version(2)).Charts[0]
	repo := strings.TrimPrefix(c.Ref[:strings.LastIndexByte(c.Ref, ':')], "oci://")
	layer := sbomLayerDigest(t, repo+"@"+c.Manifest)
	out, err = exec.Command(oras, "blob", "fetch", "--plain-http", "--output", "-", repo+"@"+layer).Output()
	if err != nil || !bytes.Equal(out, secondSBOM) {
		t.Errorf("oras blob fetch %s@%s: %v; got %d bytes, want the %d of the site's former %s", repo, layer, err, len(out), len(secondSBOM), second)
	}

	// The page shows 10 versions in full: a publish reads the build info
	// of those only (the one of 1.1.0 is not even parsed), and the 13th
	// version moves 1.3.0 out of the newest 10.
	if err := os.WriteFile(filepath.Join(siteDir, filepath.FromSlash(sitelayout.BuildInfoFile("alpha", version(1), 1))), []byte("not: [a build info"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.recipe("alpha", version(13), 1)
	if _, err := f.publish("site", nil, WithSiteKeep(10)); err != nil {
		t.Fatalf("publish of the 13th version read the build info of a version its page does not show in full: %v", err)
	}
	if _, err := os.Stat(filepath.Join(siteDir, filepath.FromSlash(sitelayout.SBOMFile("alpha", version(3), 1)))); err == nil {
		t.Errorf("%s is in the site after the 13th version", sitelayout.SBOMFile("alpha", version(3), 1))
	}
}

func readBuildInfo(t *testing.T, siteDir, pkg, version string) *spec.BuildInfo {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(siteDir, filepath.FromSlash(sitelayout.BuildInfoFile(pkg, version, 1))))
	if err != nil {
		t.Fatalf("%s %s keeps its build info: %v", pkg, version, err)
	}
	info := new(spec.BuildInfo)
	if err := dist.Unmarshal(data, info); err != nil {
		t.Fatal(err)
	}
	return info
}

// referrerLayers returns the layer of each referrer of chart c's
// manifest, by artifactType.
func referrerLayers(t *testing.T, c spec.BuiltChart) map[string][][]byte {
	t.Helper()
	subject, err := name.NewDigest(strings.TrimPrefix(c.Ref[:strings.LastIndexByte(c.Ref, ':')], "oci://")+"@"+c.Manifest, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][][]byte{}
	for _, r := range testenv.Referrers(t, subject) {
		out[r.ArtifactType] = append(out[r.ArtifactType], r.Payload)
	}
	return out
}

// sbomLayerDigest returns the digest of the layer of the SBOM referrer of
// subject (REPOSITORY@DIGEST).
func sbomLayerDigest(t *testing.T, subject string) string {
	t.Helper()
	d, err := name.NewDigest(subject, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Referrers(d)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := idx.IndexManifest()
	for _, r := range m.Manifests {
		if r.ArtifactType != SBOMArtifactType {
			continue
		}
		img, err := remote.Image(d.Context().Digest(r.Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		mf, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		return mf.Layers[0].Digest.String()
	}
	t.Fatalf("%s has no %s referrer", subject, SBOMArtifactType)
	return ""
}

var hrefRE = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

// checkSiteLinks walks every HTML page of the site and its repository
// SBOM: each relative link and each bom reference that is not an
// oci:// chart must be a file of the site, and each oci:// one a chart
// with an SBOM referrer.
func checkSiteLinks(t *testing.T, siteDir string) {
	t.Helper()
	links := 0
	err := filepath.WalkDir(siteDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		page, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(siteDir, p)
		for _, m := range hrefRE.FindAllSubmatch(page, -1) {
			u, err := url.Parse(string(m[1]))
			if err != nil {
				t.Errorf("%s: link %q: %v", rel, m[1], err)
				continue
			}
			if u.Scheme != "" || u.Host != "" || u.Path == "" {
				continue
			}
			target := path.Join(path.Dir(filepath.ToSlash(rel)), u.Path)
			if _, err := os.Stat(filepath.Join(siteDir, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links %s, which the site does not hold", rel, m[1])
			}
			links++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if links == 0 {
		t.Fatal("the pages link nothing")
	}
	var bom struct {
		Components []struct {
			ExternalReferences []struct{ URL, Type string } `json:"externalReferences"`
		} `json:"components"`
	}
	data, err := os.ReadFile(filepath.Join(siteDir, sitelayout.RepositoryBOMFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatal(err)
	}
	for _, c := range bom.Components {
		for _, r := range c.ExternalReferences {
			if r.Type != "bom" {
				continue
			}
			if ref, ok := strings.CutPrefix(r.URL, "oci://"); ok {
				tag, err := name.NewTag(ref, name.Insecure)
				if err != nil {
					t.Fatal(err)
				}
				desc, err := remote.Head(tag)
				if err != nil {
					t.Errorf("%s references chart %s: %v", sitelayout.RepositoryBOMFile, r.URL, err)
					continue
				}
				layers := referrerLayers(t, spec.BuiltChart{Ref: r.URL, Manifest: desc.Digest.String()})
				if len(layers[SBOMArtifactType]) != 1 {
					t.Errorf("%s references chart %s for an SBOM, which has %d SBOM referrers", sitelayout.RepositoryBOMFile, r.URL, len(layers[SBOMArtifactType]))
				}
				continue
			}
			if _, err := os.Stat(filepath.Join(siteDir, filepath.FromSlash(r.URL))); err != nil {
				t.Errorf("%s references %s, which the site does not hold", sitelayout.RepositoryBOMFile, r.URL)
			}
		}
	}
}

// TestSiteKeepPages keeps 2 of 3 versions: the page of the package names,
// for the version shown in full whose files the site removed, the oras
// command that lists them in the registry. A withdrawal then moves that
// version among the newest 2: its files are not brought back, and still
// nothing links what the site lacks. With --site-keep 0 nothing is removed.
func TestSiteKeepPages(t *testing.T) {
	f := newFixture(t)
	for _, v := range []string{"1.1.0", "1.2.0", "1.3.0"} {
		f.recipe("alpha", v, 1)
		if err := os.Rename(filepath.Join(f.work, "recipes", "alpha"), filepath.Join(f.work, "recipes", "alpha-"+v)); err != nil {
			t.Fatal(err)
		}
	}
	all := t.TempDir()
	if err := os.CopyFS(all, os.DirFS(filepath.Join(f.work, "recipes"))); err != nil {
		t.Fatal(err)
	}
	if _, err := f.publish("site", nil, WithSiteKeep(2)); err != nil {
		t.Fatalf("%v\n%s", err, &f.stderr)
	}
	siteDir := filepath.Join(f.work, "site")
	if _, err := os.Stat(filepath.Join(siteDir, filepath.FromSlash(sitelayout.SBOMFile("alpha", "1.1.0", 1)))); err == nil {
		t.Fatal("the oldest of 3 versions kept its SBOM with --site-keep 2")
	}
	info := readBuildInfo(t, siteDir, "alpha", "1.1.0")
	page, err := os.ReadFile(filepath.Join(siteDir, "packages", "alpha.html"))
	if err != nil {
		t.Fatal(err)
	}
	c := info.Charts[0]
	want := "oras discover " + strings.TrimPrefix(c.Ref[:strings.LastIndexByte(c.Ref, ':')], "oci://") + "@" + c.Manifest
	if !strings.Contains(string(page), want) {
		t.Errorf("packages/alpha.html does not say where the SBOM of 1.1.0 is (%q)", want)
	}
	if strings.Count(string(page), "oras discover ") != 1 {
		t.Errorf("packages/alpha.html names %d oras commands, want 1 (only 1.1.0 lacks its files)", strings.Count(string(page), "oras discover "))
	}
	checkSiteLinks(t, siteDir)

	if _, _, err := f.publisher("site", nil).Withdraw(context.Background(), "alpha", "1.3.0", 1, "broken upgrade"); err != nil {
		t.Fatal(err)
	}
	checkSiteLinks(t, siteDir)

	f.work = t.TempDir()
	if err := os.CopyFS(filepath.Join(f.work, "recipes"), os.DirFS(all)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.publish("site", nil, WithSiteKeep(0)); err != nil {
		t.Fatalf("%v\n%s", err, &f.stderr)
	}
	for _, v := range []string{"1.1.0", "1.2.0", "1.3.0"} {
		for _, file := range []string{sitelayout.SBOMFile("alpha", v, 1), sitelayout.ProvenanceFile("alpha", v, 1)} {
			if _, err := os.Stat(filepath.Join(f.work, "site", filepath.FromSlash(file))); err != nil {
				t.Errorf("--site-keep 0: %v", err)
			}
		}
	}
	checkSiteLinks(t, filepath.Join(f.work, "site"))
}

// sbomReferrers is a target that handles the pushes of SBOM referrers
// with push: nil drops them (a registry written by a kbuild before SBOMs
// were referrers), an error fails them.
type sbomReferrers struct {
	oci.Target
	err error
}

func (s sbomReferrers) PushReferrer(ctx context.Context, repo string, img v1.Image) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	if len(m.Layers) == 1 && string(m.Layers[0].MediaType) == SBOMArtifactType {
		return s.err
	}
	return s.Target.PushReferrer(ctx, repo, img)
}

// TestSiteKeepAttachesBeforeRemoving: a version published when SBOMs were
// not referrers gets its SBOM attached, from the site's file, before the
// file goes; when the registry refuses that, the files stay and publish
// warns, and the next publish that can attach it removes them.
func TestSiteKeepAttachesBeforeRemoving(t *testing.T) {
	f := newFixture(t)
	f.recipe("alpha", "1.1.0", 1)
	if _, err := f.publish("site", func(t oci.Target) oci.Target { return sbomReferrers{Target: t} }); err != nil {
		t.Fatal(err)
	}
	siteDir := filepath.Join(f.work, "site")
	file := filepath.Join(siteDir, filepath.FromSlash(sitelayout.SBOMFile("alpha", "1.1.0", 1)))
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := readBuildInfo(t, siteDir, "alpha", "1.1.0").Charts[0]
	if n := len(referrerLayers(t, c)[SBOMArtifactType]); n != 0 {
		t.Fatalf("the legacy publish attached %d SBOMs", n)
	}

	f.recipe("alpha", "1.2.0", 1)
	refuse := func(t oci.Target) oci.Target {
		return sbomReferrers{Target: t, err: errors.New("denied: quota exceeded")}
	}
	if _, err := f.publish("site", refuse, WithSiteKeep(1)); err == nil {
		t.Fatal("a publish whose new version's SBOM cannot be attached succeeded")
	}
	// The new version's SBOM must be attached, or publish stops. With a
	// working registry, the old version's SBOM is attached, then its file
	// removed.
	if _, err := f.publish("site", nil, WithSiteKeep(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("%s is still in the site after its SBOM was attached", file)
	}
	layers := referrerLayers(t, c)[SBOMArtifactType]
	if len(layers) != 1 || !bytes.Equal(layers[0], old) {
		t.Fatalf("alpha 1.1.0 has %d SBOM referrers, want one holding the site's former file", len(layers))
	}
	checkSiteLinks(t, siteDir)

	// A registry that refuses the attachment: the files stay, with a
	// warning naming the version.
	g := newFixture(t)
	g.recipe("alpha", "1.1.0", 1)
	if _, err := g.publish("site", func(t oci.Target) oci.Target { return sbomReferrers{Target: t} }); err != nil {
		t.Fatal(err)
	}
	g.recipe("alpha", "1.2.0", 1)
	onlyOld := func(t oci.Target) oci.Target { return &refuseOld{Target: t} }
	if _, err := g.publish("site", onlyOld, WithSiteKeep(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g.work, "site", filepath.FromSlash(sitelayout.SBOMFile("alpha", "1.1.0", 1)))); err != nil {
		t.Errorf("the SBOM of 1.1.0 was removed although the registry refused to hold it: %v", err)
	}
	if !strings.Contains(g.stderr.String(), "alpha 1.1.0 build 1: keeping its SBOM and provenance in the site") || !strings.Contains(g.stderr.String(), "quota exceeded") {
		t.Errorf("no warning naming the version and the registry's refusal:\n%s", &g.stderr)
	}
	checkSiteLinks(t, filepath.Join(g.work, "site"))
}

// refuseOld refuses SBOM referrers of charts tagged 1.1.0-1 only.
type refuseOld struct{ oci.Target }

func (r *refuseOld) PushReferrer(ctx context.Context, repo string, img v1.Image) error {
	if repo == "alpha/alpha" {
		m, err := img.Manifest()
		if err == nil && string(m.Layers[0].MediaType) == SBOMArtifactType && m.Annotations["org.opencontainers.image.created"] != "" {
			if h, _, err := r.Target.Lookup(ctx, repo, "1.1.0-1"); err == nil && m.Subject != nil && m.Subject.Digest == h {
				return errors.New("denied: quota exceeded")
			}
		}
	}
	return r.Target.PushReferrer(ctx, repo, img)
}
