package chartpin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

func TestRef(t *testing.T) {
	for _, tc := range []struct {
		chart spec.ChartRef
		want  string
	}{
		{spec.ChartRef{Repository: "oci://ghcr.io/org/charts", Name: "op", Version: "1.0.0-1"}, "ghcr.io/org/charts/op:1.0.0-1"},
		{spec.ChartRef{Repository: "oci://ghcr.io/org/charts/", Name: "op", Version: "1.0.0-1"}, "ghcr.io/org/charts/op:1.0.0-1"},
		{spec.ChartRef{Repository: "oci://127.0.0.1:5000/p", Name: "web", Version: "2.1.0+build.7-1"}, "127.0.0.1:5000/p/web:2.1.0_build.7-1"},
		{spec.ChartRef{Repository: "ghcr.io/org", Name: "op", Version: "1"}, "ghcr.io/org/op:1"},
	} {
		if got := Ref(&tc.chart); got != tc.want {
			t.Errorf("Ref(%+v) = %s, want %s", tc.chart, got, tc.want)
		}
	}
}

func TestMismatchError(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Mismatch
		want string
	}{
		{"replaced", Mismatch{Where: "op 1.0.0 build 1 variant default component op", Ref: "r/op:1.0.0-1", Pinned: "sha256:aa", Got: "sha256:bb"},
			"op 1.0.0 build 1 variant default component op: chart r/op:1.0.0-1 archive is sha256:bb, but the index pins sha256:aa; the chart was pushed again after the index was made"},
		{"unreadable", Mismatch{Where: "op 1.0.0 build 1 variant default component op", Ref: "r/op:1.0.0-1", Pinned: "sha256:aa", Err: errors.New("MANIFEST_UNKNOWN")},
			"op 1.0.0 build 1 variant default component op: chart r/op:1.0.0-1: MANIFEST_UNKNOWN"},
	} {
		if got := tc.m.Error(); got != tc.want {
			t.Errorf("%s: Error() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// pushChart pushes the archive testdata/file as a Helm chart artifact
// (a Helm config and one chart layer) to ref and returns its sha256.
func pushChart(t *testing.T, ref, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return pushLayer(t, ref, data, ChartLayerMediaType)
}

// pushLayer pushes an artifact with one layer of media type mt to ref and
// returns the layer's sha256.
func pushLayer(t *testing.T, ref string, data []byte, mt types.MediaType) string {
	t.Helper()
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), static.NewLayer(data, mt))
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.ConfigMediaType(img, "application/vnd.cncf.helm.config.v1+json")
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// pinned is one chart an index pins: package, version and build, the
// chart's repository, name, version and archive digest.
type pinned struct {
	pkg, version string
	build        int
	repo, chart  string
	chartVersion string
	digest       string
	noChart      bool // a component without a chart
}

func indexOf(pins []pinned) *index.RepositoryIndex {
	x := &index.RepositoryIndex{Packages: map[string]*index.IndexPackage{}}
	for _, p := range pins {
		c := spec.Component{Name: p.pkg}
		if !p.noChart {
			c.Chart = &spec.ChartRef{Repository: p.repo, Name: p.chart, Version: p.chartVersion, Digest: p.digest}
		}
		ip := x.Packages[p.pkg]
		if ip == nil {
			ip = &index.IndexPackage{}
			x.Packages[p.pkg] = ip
		}
		ip.Versions = append(ip.Versions, index.IndexVersion{Version: p.version, Build: p.build,
			Spec: spec.PackageSpec{Variants: []spec.Variant{{Name: "default", Components: []spec.Component{c}}}}})
	}
	return x
}

// TestCheck checks the charts of an index against an in-process registry
// holding two charts as published, one pushed again since, and an
// artifact that is not a chart.
func TestCheck(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	repo := "oci://" + host + "/charts"
	op := pushChart(t, host+"/charts/op:1.0.0-1", "op-1.0.0-1.tgz")
	web := pushChart(t, host+"/charts/web:2.1.0_build.7-1", "web-2.1.0+build.7-1.tgz")
	repushed := pushChart(t, host+"/charts/op:1.0.0-2", "op-1.0.0-1-repushed.tgz")
	pushLayer(t, host+"/charts/notes:1.0.0-1", []byte("release notes"), "text/plain")

	opPin := pinned{pkg: "op", version: "1.0.0", build: 1, repo: repo, chart: "op", chartVersion: "1.0.0-1", digest: op}
	webPin := pinned{pkg: "web", version: "2.1.0+build.7", build: 1, repo: repo, chart: "web", chartVersion: "2.1.0+build.7-1", digest: web}
	opAgain := pinned{pkg: "op", version: "1.0.0", build: 2, repo: repo, chart: "op", chartVersion: "1.0.0-2", digest: op}
	type want struct {
		where, got, err string // err: a part of Err's message, "" for none
	}
	for _, tc := range []struct {
		name    string
		pins    []pinned
		jobs    int
		checked int
		want    []want
	}{
		{name: "every chart as pinned", pins: []pinned{opPin, webPin}, checked: 2},
		{name: "one job at a time", pins: []pinned{opPin, webPin}, jobs: 1, checked: 2},
		{name: "a chart pinned twice is pulled once", pins: []pinned{opPin, {pkg: "op-alias", version: "1.0.0", build: 1, repo: repo, chart: "op", chartVersion: "1.0.0-1", digest: op}}, checked: 1},
		{name: "a component without a chart", pins: []pinned{{pkg: "meta", version: "1.0.0", build: 1, noChart: true}}, checked: 0},
		{name: "a chart pushed again", pins: []pinned{opPin, opAgain}, checked: 2,
			want: []want{{where: "op 1.0.0 build 2 variant default component op", got: repushed}}},
		{name: "a chart version missing", pins: []pinned{{pkg: "op", version: "9.9.9", build: 1, repo: repo, chart: "op", chartVersion: "9.9.9-1", digest: op}}, checked: 1,
			want: []want{{where: "op 9.9.9 build 1 variant default component op", err: "MANIFEST_UNKNOWN"}}},
		{name: "a chart repository missing", pins: []pinned{{pkg: "gone", version: "9.9.9", build: 1, repo: repo, chart: "gone", chartVersion: "9.9.9-1", digest: op}}, checked: 1,
			want: []want{{where: "gone 9.9.9 build 1 variant default component gone", err: "NAME_UNKNOWN"}}},
		{name: "an artifact that is not a chart", pins: []pinned{{pkg: "notes", version: "1.0.0", build: 1, repo: repo, chart: "notes", chartVersion: "1.0.0-1", digest: op}}, checked: 1,
			want: []want{{where: "notes 1.0.0 build 1 variant default component notes", err: "not a Helm chart"}}},
		{name: "a reference that does not parse", pins: []pinned{{pkg: "bad", version: "1.0.0", build: 1, repo: "oci://" + host + "/Charts", chart: "bad", chartVersion: "1.0.0-1", digest: op}}, checked: 1,
			want: []want{{where: "bad 1.0.0 build 1 variant default component bad", err: "could not parse reference"}}},
		{name: "mismatches sorted by where", pins: []pinned{opAgain, {pkg: "gone", version: "9.9.9", build: 1, repo: repo, chart: "gone", chartVersion: "9.9.9-1", digest: op}, webPin}, checked: 3,
			want: []want{{where: "gone 9.9.9 build 1 variant default component gone", err: "NAME_UNKNOWN"}, {where: "op 1.0.0 build 2 variant default component op", got: repushed}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, bad := Check(context.Background(), indexOf(tc.pins), Options{PlainHTTP: true, Jobs: tc.jobs})
			if n != tc.checked {
				t.Errorf("Check() checked %d charts, want %d", n, tc.checked)
			}
			if len(bad) != len(tc.want) {
				t.Fatalf("Check() = %d mismatches %v, want %d", len(bad), bad, len(tc.want))
			}
			for i, w := range tc.want {
				m := bad[i]
				if m.Where != w.where || m.Got != w.got {
					t.Errorf("mismatch %d = %q got %q, want %q got %q", i, m.Where, m.Got, w.where, w.got)
				}
				if w.err == "" && m.Err != nil || w.err != "" && (m.Err == nil || !strings.Contains(m.Err.Error(), w.err)) {
					t.Errorf("mismatch %d: Err = %v, want one containing %q", i, m.Err, w.err)
				}
			}
		})
	}
}

// TestCheckCancelled checks that a cancelled context ends every pull with
// an error instead of a pass.
func TestCheckCancelled(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	op := pushChart(t, host+"/charts/op:1.0.0-1", "op-1.0.0-1.tgz")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := indexOf([]pinned{{pkg: "op", version: "1.0.0", build: 1, repo: "oci://" + host + "/charts", chart: "op", chartVersion: "1.0.0-1", digest: op}})
	if n, bad := Check(ctx, x, Options{PlainHTTP: true}); n != 1 || len(bad) != 1 || !errors.Is(bad[0].Err, context.Canceled) {
		t.Fatalf("Check(cancelled) = %d, %v; want 1 chart, one mismatch wrapping context.Canceled", n, bad)
	}
}
