package siteread

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
)

// buildsIndex is an index of kubevirt 1.9.0 build 4, 1.8.2 build 1 and
// cdi 1.66.1 build 1.
func buildsIndex(t *testing.T) *index.RepositoryIndex {
	t.Helper()
	b := index.NewBuilder()
	for _, r := range []struct {
		name, version string
		build         int
	}{{"kubevirt", "1.9.0", 4}, {"kubevirt", "1.8.2", 1}, {"cdi", "1.66.1", 1}} {
		rec := testRecord(r.name, r.version, "oci://r/"+r.name)
		rec.Spec.Build = r.build
		if err := b.Add(r.name, rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestBuildsSelect(t *testing.T) {
	in, err := fromIndex("index.yaml", buildsIndex(t), func(string, string, int) ([]byte, bool, error) { return nil, false, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{name: "everything, sorted", want: []string{"cdi 1.66.1-1", "kubevirt 1.9.0-4", "kubevirt 1.8.2-1"}},
		{name: "one version", args: []string{"kubevirt@v1.9.0"}, want: []string{"kubevirt 1.9.0-4"}},
		{name: "a package twice", args: []string{"kubevirt", "kubevirt@1.8.2"}, want: []string{"kubevirt 1.9.0-4", "kubevirt 1.8.2-1"}},
		{name: "unknown package", args: []string{"redis"}, wantErr: `package "redis" is not in index index.yaml; it has cdi, kubevirt`},
		{name: "unknown version", args: []string{"kubevirt@1.7.0"}, wantErr: "kubevirt@1.7.0 is not in index index.yaml; kubevirt has 1.9.0 (build 4), 1.8.2 (build 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := in.Select(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Select(%q) = %v, want an error containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			var names []string
			for _, b := range got {
				names = append(names, b.Name+" "+b.Spec.Version+"-"+strconv.Itoa(b.Spec.Build))
			}
			if err != nil || strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("Select(%q) = %v, %v; want %v", tc.args, names, err, tc.want)
			}
		})
	}
}

func TestBuildsSidecars(t *testing.T) {
	x := buildsIndex(t)
	for _, tc := range []struct {
		name, sidecar, wantErr string
	}{
		{"matching", "apiVersion: kbuild.dev/v1\nkind: BuildInfo\npackage: cdi\nversion: 1.66.1\nbuild: 1\n", ""},
		{"another version's", "apiVersion: kbuild.dev/v1\nkind: BuildInfo\npackage: cdi\nversion: 1.66.0\nbuild: 1\n", "build info build/cdi-1.66.1-1.build.yaml beside index.yaml: expected kind BuildInfo of cdi@1.66.1 build 1, got kind \"BuildInfo\" of cdi@1.66.0 build 1"},
		{"unknown field", "apiVersion: kbuild.dev/v1\nkind: BuildInfo\npackage: cdi\nversion: 1.66.1\nbuild: 1\nextra: 1\n", "build info build/cdi-1.66.1-1.build.yaml beside index.yaml: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := fromIndex("index.yaml", x, func(n, v string, b int) ([]byte, bool, error) {
				if n == "cdi" {
					return []byte(tc.sidecar), true, nil
				}
				return nil, false, nil
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("fromIndex = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || in.Builds[0].Info == nil || in.Builds[1].Info != nil {
				t.Fatalf("fromIndex = %+v, %v; want cdi's build info only", in, err)
			}
		})
	}
}

func TestLoadBuildsNeedsTrust(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadBuilds(context.Background(), "https://example.com/index.yaml", nil, BuildsOptions{})
	if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "reading the index https://example.com/index.yaml: a published index is used only once its signature is verified") {
		t.Errorf("LoadBuilds of an index without trust = %v, want ErrUnverified", err)
	}
	if _, err := LoadBuilds(context.Background(), dir, nil, BuildsOptions{}); err == nil || !strings.Contains(err.Error(), "has no build records") {
		t.Errorf("LoadBuilds of an empty dist directory = %v, want an error saying it has no build records", err)
	}
	// With Index (kbuild's --index), the directory is a site: its index
	// needs keys, and it is not read as a dist directory.
	if _, err := LoadBuilds(context.Background(), dir, nil, BuildsOptions{Index: true}); !errors.Is(err, ErrUnverified) {
		t.Errorf("LoadBuilds of a site directory without trust = %v, want ErrUnverified", err)
	}
}
