package draft

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sources"
)

func TestSourcesOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		req     Request
		want    *draft
		wantErr string
	}{
		{"chart", Request{Chart: "https://charts.example.com/Redis_Server@v7.2.4"}, &draft{Name: "redis-server", Version: "7.2.4", Chart: "redis-server",
			Sources: []draftSource{{"upstream", recipe.Source{Chart: &recipe.ChartSource{Repository: "https://charts.example.com", Name: "Redis_Server", Version: "v7.2.4"}}}}}, ""},
		{"chart with name and version", Request{Chart: "oci://ghcr.io/org/charts/podinfo@6.7.1", Name: "info", Version: "v6.7"}, &draft{Name: "info", Version: "6.7", Chart: "podinfo",
			Sources: []draftSource{{"upstream", recipe.Source{Chart: &recipe.ChartSource{Repository: "oci://ghcr.io/org/charts", Name: "podinfo", Version: "6.7.1"}}}}}, ""},
		{"manifests, names made unique", Request{Manifests: []string{"https://x.example/v1/kubevirt-operator.yaml", "https://x.example/v1/kubevirt-cr.tar.gz", "https://y.example/kubevirt-operator.yaml"}, Version: "v1.9.0"},
			&draft{Name: "kubevirt-operator", Version: "1.9.0", Chart: "kubevirt-operator", Sources: []draftSource{
				{"kubevirt-operator", recipe.Source{URL: "https://x.example/v1/kubevirt-operator.yaml"}},
				{"kubevirt-cr", recipe.Source{URL: "https://x.example/v1/kubevirt-cr.tar.gz"}},
				{"kubevirt-operator-2", recipe.Source{URL: "https://y.example/kubevirt-operator.yaml"}}}}, ""},
		{"chart without version", Request{Chart: "https://charts.example.com/redis"}, nil, `chart "https://charts.example.com/redis": expected REPO/NAME@VERSION`},
		{"chart without repository", Request{Chart: "redis@7.2.4"}, nil, "expected REPO/NAME@VERSION"},
		{"manifests without version", Request{Manifests: []string{"https://x.example/a.yaml"}}, nil, "manifests need a version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sourcesOf(tc.req)
			if tc.wantErr != "" {
				var re *RequestError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("sourcesOf(%+v) = %v, want a *RequestError containing %q", tc.req, err, tc.wantErr)
				}
				if re.Input == "chart" && !strings.HasPrefix(err.Error(), "chart ") {
					t.Errorf("sourcesOf(%+v) = %v about input %q, want the message to start with it", tc.req, err, re.Input)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tc.want.Name || got.Version != tc.want.Version || got.Chart != tc.want.Chart || len(got.Sources) != len(tc.want.Sources) {
				t.Fatalf("sourcesOf(%+v) = %+v, want %+v", tc.req, got, tc.want)
			}
			for i, s := range got.Sources {
				w := tc.want.Sources[i]
				if s.Name != w.Name || s.Source.URL != w.Source.URL || (s.Source.Chart == nil) != (w.Source.Chart == nil) || s.Source.Chart != nil && *s.Source.Chart != *w.Source.Chart {
					t.Errorf("source %d = %+v, want %+v", i, s, w)
				}
			}
		})
	}
}

// tools returns the Tools of kbuild init over a fresh cache.
func tools(t *testing.T) Tools {
	t.Helper()
	fetch, err := sources.New(sources.WithCacheDir(t.TempDir()), sources.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	opts := []builder.Option{builder.WithOutputDir(t.TempDir()), builder.WithEpoch(time.Unix(0, 0)), builder.WithJobs(1)}
	lenient, err := builder.New(fetch, nil, append(opts, builder.WithUnpinnedImages(true))...)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := builder.New(fetch, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return Tools{Fetcher: fetch, Lenient: lenient, Strict: strict}
}

func TestWriteManifests(t *testing.T) {
	manifest, err := os.ReadFile("testdata/operator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2.0.0/widget-operator.yaml" {
			http.NotFound(w, r)
			return
		}
		w.Write(manifest)
	}))
	defer srv.Close()
	sum := sha256.Sum256(manifest)
	dir := filepath.Join(t.TempDir(), "widgets")
	req := Request{Manifests: []string{srv.URL + "/v2.0.0/widget-operator.yaml"}, Version: "v2.0.0", Name: "widgets"}

	res, err := Write(context.Background(), dir, req, tools(t))
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if res.File != filepath.Join(dir, "recipe.yaml") || len(res.Unpinned) != 0 {
		t.Errorf("Write = %+v, want %s and no unpinned images", res, filepath.Join(dir, "recipe.yaml"))
	}
	data, err := os.ReadFile(res.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  name: widgets\n", `version: "2.0.0"`, "build: 1\n",
		`url: "` + srv.URL + `/v2.0.0/widget-operator.yaml"`, `sha256: "` + hex.EncodeToString(sum[:]) + `"`,
		"      exclude:\n        - kind: Namespace\n", "    crds:\n      - widgets.example.com\n",
		"rollback: {safe: false}", "namespace: widgets\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the draft lacks %q:\n%s", want, data)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("Write left %d files in %s, want recipe.yaml alone (no temporary file)", len(entries), dir)
	}

	// An existing recipe is never overwritten.
	if _, err := Write(context.Background(), dir, req, tools(t)); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Write over an existing recipe = %v, want an error saying it exists", err)
	}
	if again, _ := os.ReadFile(res.File); string(again) != string(data) {
		t.Errorf("a refused Write changed %s", res.File)
	}

	// A source that cannot be pinned: an error naming it, nothing written,
	// not even the directory.
	missing := filepath.Join(t.TempDir(), "missing")
	req.Manifests = append(req.Manifests, srv.URL+"/v2.0.0/gone.yaml")
	if _, err := Write(context.Background(), missing, req, tools(t)); err == nil || !strings.Contains(err.Error(), "source gone:") {
		t.Errorf("Write with a missing source = %v, want an error naming source gone", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a failed Write left %s behind (Stat: %v)", missing, err)
	}
}
