package sbom

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// epoch is the SOURCE_DATE_EPOCH of the golden files: 2026-01-01T00:00:00Z.
var epoch = time.Unix(1767225600, 0)

func loadBuilds(t *testing.T, dir string) []Build {
	t.Helper()
	recs, err := dist.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bs []Build
	for _, r := range recs {
		bs = append(bs, FromRecord(r.Record, r.Info))
	}
	return bs
}

func find(t *testing.T, bs []Build, key string) Build {
	t.Helper()
	for _, b := range bs {
		if b.key() == key {
			return b
		}
	}
	t.Fatalf("no build %s in testdata", key)
	return Build{}
}

// cannedContents returns testdata/trivy-image.cdx.json for every image,
// with fresh random UUIDs, serial number and timestamp each time and its
// components in random order, as Trivy's output varies between runs.
type cannedContents struct {
	mu    sync.Mutex
	calls []string
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func (c *cannedContents) ImageBOM(ctx context.Context, ref string) (*cdx.BOM, error) {
	c.mu.Lock()
	c.calls = append(c.calls, ref)
	c.mu.Unlock()
	data, err := os.ReadFile("testdata/trivy-image.cdx.json")
	if err != nil {
		return nil, err
	}
	fresh := map[string]string{}
	data = uuidRE.ReplaceAllFunc(data, func(u []byte) []byte {
		if n, ok := fresh[string(u)]; ok {
			return []byte(n)
		}
		var b [16]byte
		rand.Read(b[:])
		n := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		fresh[string(u)] = n
		return []byte(n)
	})
	data = bytes.Replace(data, []byte("2026-11-30T17:01:02+00:00"), []byte(time.Now().UTC().Format(time.RFC3339)), 1)
	var bom cdx.BOM
	if err := json.Unmarshal(data, &bom); err != nil {
		return nil, err
	}
	cs := *bom.Components
	for i := len(cs) - 1; i > 0; i-- {
		j, _ := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		cs[i], cs[j.Int64()] = cs[j.Int64()], cs[i]
	}
	return &bom, nil
}

func TestGolden(t *testing.T) {
	ctx := context.Background()
	all := loadBuilds(t, "testdata/dist")
	tests := []struct {
		name   string
		golden string
		make   func() (*cdx.BOM, error)
	}{
		{
			name:   "repository",
			golden: "repository.cdx.json",
			make: func() (*cdx.BOM, error) {
				return ForRepository(ctx, "https://charts.example.com/kbuild/index.yaml", all, WithTimestamp(epoch), WithTool("kbuild", "v0.1.0"))
			},
		},
		{
			name:   "one build",
			golden: "kubevirt-1.9.0-4.cdx.json",
			make: func() (*cdx.BOM, error) {
				return ForBuild(ctx, find(t, all, "kubevirt-1.9.0-4"), WithTimestamp(epoch))
			},
		},
		{
			name:   "build without BuildInfo, no timestamp",
			golden: "kubevirt-1.8.2-1.cdx.json",
			make: func() (*cdx.BOM, error) {
				return ForBuild(ctx, find(t, all, "kubevirt-1.8.2-1"))
			},
		},
		{
			name:   "with image contents",
			golden: "kubevirt-1.9.0-4-contents.cdx.json",
			make: func() (*cdx.BOM, error) {
				return ForBuild(ctx, find(t, all, "kubevirt-1.9.0-4"), WithTimestamp(epoch), WithImageContents(&cannedContents{}))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := marshalValid(t)(tc.make())
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./sbom -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("BOM differs from %s (run go test ./sbom -update if the change is intended):\n%s", golden, firstDiff(got, want))
			}
			// Same inputs, same bytes.
			again, err := tc.make()
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := Marshal(again); !bytes.Equal(b, got) {
				t.Errorf("second run differs:\n%s", firstDiff(b, got))
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	n := 0
	for n < len(got) && n < len(want) && got[n] == want[n] {
		n++
	}
	if n == len(got) && n == len(want) {
		return "(no byte differs)"
	}
	from := max(0, n-60)
	ctx := func(b []byte) string { return string(b[from:min(len(b), n+60)]) }
	return fmt.Sprintf("byte %d:\n got  %q\n want %q", n, ctx(got), ctx(want))
}

func TestOrderDoesNotMatter(t *testing.T) {
	ctx := context.Background()
	all := loadBuilds(t, "testdata/dist")
	rev := make([]Build, len(all))
	for i, b := range all {
		rev[len(all)-1-i] = b
	}
	a, err := ForRepository(ctx, "repo", all, WithImageContents(&cannedContents{}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ForRepository(ctx, "repo", rev, WithImageContents(&cannedContents{}))
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := Marshal(a)
	jb, _ := Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("ForRepository depends on the order of builds:\n%s", firstDiff(ja, jb))
	}
	validateBOM(t, ja)
	if uuidRE.Match(bytes.ReplaceAll(ja, []byte(a.SerialNumber[len("urn:uuid:"):]), nil)) {
		t.Errorf("BOM keeps a random UUID from Trivy's output")
	}
}

func TestRepositoryContents(t *testing.T) {
	all := loadBuilds(t, "testdata/dist")
	cc := &cannedContents{}
	bom, err := ForRepository(context.Background(), "repo", all, WithImageContents(cc))
	if err != nil {
		t.Fatal(err)
	}
	// One call per distinct pinned image: 5 of kubevirt 1.9.0, 1 of 1.8.2,
	// 1 of cdi (its second image is not pinned).
	if len(cc.calls) != 7 {
		t.Errorf("ImageBOM called %d times (%v), want 7", len(cc.calls), cc.calls)
	}
	var tools []string
	for _, c := range *bom.Metadata.Tools.Components {
		tools = append(tools, c.Group+"/"+c.Name+"@"+c.Version)
	}
	if got, want := strings.Join(tools, ","), "aquasecurity/trivy@0.74.0"; got != want {
		t.Errorf("metadata.tools = %s, want %s", got, want)
	}
}

func TestDependencies(t *testing.T) {
	all := loadBuilds(t, "testdata/dist")
	bom, err := ForRepository(context.Background(), "repo", all)
	if err != nil {
		t.Fatal(err)
	}
	// A dependency on a chart or image is shown by the component's purl:
	// its bom-ref is a short name of the purl.
	purls := map[string]string{}
	for _, c := range *bom.Components {
		if kind, _, _ := strings.Cut(c.BOMRef, ":"); kind == "chart" || kind == "image" {
			if want := ociRef(kind, c.PackageURL); c.BOMRef != want {
				t.Errorf("bom-ref of %s = %s, want %s", c.PackageURL, c.BOMRef, want)
			}
			purls[c.BOMRef] = c.PackageURL
		}
	}
	deps := map[string][]string{}
	for _, d := range *bom.Dependencies {
		for _, ref := range *d.Dependencies {
			if p, ok := purls[ref]; ok {
				ref = p
			}
			deps[d.Ref] = append(deps[d.Ref], ref)
		}
		slices.Sort(deps[d.Ref])
	}
	tests := []struct {
		ref  string
		want []string
	}{
		{"repository:repo", []string{"package:cdi-1.66.1-1", "package:kubevirt-1.8.2-1", "package:kubevirt-1.9.0-4", "package:virt-stack-1.0.0-1"}},
		// >=1.8.0 <1.9.0 picks 1.8.2; cert-manager is not in the BOM.
		{"package:cdi-1.66.1-1", []string{
			"package:kubevirt-1.8.2-1",
			"pkg:oci/cdi-importer?repository_url=quay.io%2Fkubevirt%2Fcdi-importer&tag=v1.66.1",
			"pkg:oci/cdi-operator@sha256:8888888888888888888888888888888888888888888888888888888888888888?repository_url=quay.io%2Fkubevirt%2Fcdi-operator&tag=v1.66.1",
			"pkg:oci/cdi@sha256:9999999999999999999999999999999999999999999999999999999999999999?repository_url=registry.example.com%2Fkbuild%2Fcdi%2Fcdi&tag=1.66.1-1",
			"source:cdi-1.66.1-1/generated",
			"source:cdi-1.66.1-1/importer",
			"source:cdi-1.66.1-1/manifests",
			"source:cdi-1.66.1-1/overlay",
			"source:cdi-1.66.1-1/upstream-chart",
		}},
		// >=1.8.0 picks the newest, 1.9.0.
		{"package:virt-stack-1.0.0-1", []string{"package:cdi-1.66.1-1", "package:kubevirt-1.9.0-4"}},
	}
	for _, tc := range tests {
		if got := strings.Join(deps[tc.ref], "\n"); got != strings.Join(tc.want, "\n") {
			t.Errorf("dependsOn of %s =\n%s\nwant\n%s", tc.ref, got, strings.Join(tc.want, "\n"))
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	all := loadBuilds(t, "testdata/dist")
	kv := find(t, all, "kubevirt-1.9.0-4")
	tests := []struct {
		name   string
		builds func() []Build
		want   string
	}{
		{"digest mismatch", func() []Build {
			b := kv
			b.Digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
			return []Build{b}
		}, "published digest sha256:0000000000000000000000000000000000000000000000000000000000000000 does not match its spec"},
		{"duplicate", func() []Build { return []Build{kv, kv} }, "kubevirt@1.9.0 build 4 appears twice"},
		{"bad image", func() []Build {
			b := kv
			b.Spec.Images = []string{"quay.io/x:v1@sha256:abc"}
			return []Build{b}
		}, `kubevirt@1.9.0 build 4: image quay.io/x:v1@sha256:abc: digest "sha256:abc": expected sha256:<64 lowercase hex digits>`},
		{"bad constraint", func() []Build {
			b := find(t, all, "virt-stack-1.0.0-1")
			b.Spec.Variants[0].Requires = []spec.Requirement{{Package: "kubevirt", Version: ">=banana"}}
			return []Build{b, kv}
		}, `virt-stack@1.0.0 build 1: variant "default" requires kubevirt version ">=banana"`},
		{"bad source digest", func() []Build {
			b := kv
			info := *b.Info
			info.Sources = append([]spec.ResolvedSource(nil), info.Sources...)
			info.Sources[0].Digest = "md5:1"
			b.Info = &info
			return []Build{b}
		}, `kubevirt@1.9.0 build 4: source cr: digest "md5:1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ForRepository(ctx, "repo", tc.builds())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ForRepository() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestSerialNumber(t *testing.T) {
	// Computed once by the hand-written UUIDv5 that uuid.NewSHA1
	// replaced: a serial number must never change.
	if got, want := serialNumber([]string{"sha256:2222", "sha256:1111"}), "urn:uuid:ad3131ad-c29b-55f2-b546-70256d35dcd8"; got != want {
		t.Errorf("serialNumber(sha256:2222, sha256:1111) = %s, want %s", got, want)
	}
	a := serialNumber([]string{"sha256:b", "sha256:a"})
	b := serialNumber([]string{"sha256:a", "sha256:b"})
	if a != b {
		t.Errorf("serialNumber depends on order: %s != %s", a, b)
	}
	if c := serialNumber([]string{"sha256:a"}); c == a {
		t.Errorf("serialNumber of different packages is the same: %s", c)
	}
}

func TestParseImageRef(t *testing.T) {
	const d = "sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"
	tests := []struct {
		in, repoURL, tag, digest, purl, err string
	}{
		{in: "quay.io/kubevirt/virt-api:v1.9.0@" + d, repoURL: "quay.io/kubevirt/virt-api", tag: "v1.9.0", digest: d,
			purl: "pkg:oci/virt-api@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69?repository_url=quay.io%2Fkubevirt%2Fvirt-api&tag=v1.9.0"},
		{in: "127.0.0.1:5000/a/b@" + d, repoURL: "127.0.0.1:5000/a/b", digest: d,
			purl: "pkg:oci/b@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69?repository_url=127.0.0.1:5000%2Fa%2Fb"},
		{in: "localhost:5000/x:1.0_build", repoURL: "localhost:5000/x", tag: "1.0_build",
			purl: "pkg:oci/x?repository_url=localhost:5000%2Fx&tag=1.0_build"},
		{in: "busybox:1.36", repoURL: "docker.io/library/busybox", tag: "1.36",
			purl: "pkg:oci/busybox?repository_url=docker.io%2Flibrary%2Fbusybox&tag=1.36"},
		{in: "quay.io/x:@" + d, err: "empty tag"},
		{in: "quay.io/x:v1@sha256:ABC", err: "expected sha256:<64 lowercase hex digits>"},
		{in: "quay.io/", err: "expected registry/repository"},
	}
	for _, tc := range tests {
		r, err := parseImageRef(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseImageRef(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseImageRef(%q) error = %v", tc.in, err)
			continue
		}
		if r.Name() != tc.repoURL || r.Tag != tc.tag || r.Digest != tc.digest {
			t.Errorf("parseImageRef(%q) = %s %q %q, want %s %q %q", tc.in, r.Name(), r.Tag, r.Digest, tc.repoURL, tc.tag, tc.digest)
		}
		if got := ociPURL(r.Name(), r.Digest, r.Tag); got != tc.purl {
			t.Errorf("purl of %q = %s, want %s", tc.in, got, tc.purl)
		}
	}
}
