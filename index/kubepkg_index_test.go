package index

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"
)

// kpWIndex is an index as kubepkg's repo.Index.Write writes it
// (sigs.k8s.io/yaml of its Index type): build left out when 0, generated
// optional. Specs are raw JSON so that a test can write one as a newer
// kubepkg would, with a field kbuild does not know.
type kpWIndex struct {
	APIVersion string                `json:"apiVersion,omitempty"`
	Kind       string                `json:"kind"`
	Generated  *time.Time            `json:"generated,omitempty"`
	Expires    *time.Time            `json:"expires,omitempty"`
	Packages   map[string]kpWPackage `json:"packages"`
	Mirror     string                `json:"mirror,omitempty"` // a field of a newer kubepkg
}

type kpWPackage struct {
	Description string       `json:"description,omitempty"`
	Home        string       `json:"home,omitempty"`
	Keywords    []string     `json:"keywords,omitempty"` // a field of a newer kubepkg
	Versions    []kpWVersion `json:"versions"`
}

type kpWVersion struct {
	Version string          `json:"version"`
	Build   int32           `json:"build,omitempty"`
	Digest  string          `json:"digest"`
	Spec    json.RawMessage `json:"spec"`
}

// kpVersion returns an index entry for spec as kubepkg writes it, with
// extra JSON fields merged into the spec's first variant (as a newer
// kubepkg's type would write them) and the digest over all of it.
func kpVersion(t testing.TB, s kpSpec, extra map[string]any) kpWVersion {
	t.Helper()
	raw, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	if extra != nil {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		v0 := m["variants"].([]any)[0].(map[string]any)
		for k, v := range extra {
			v0[k] = v
		}
		if raw, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256(raw)
	return kpWVersion{Version: s.Version, Build: s.Build, Digest: "sha256:" + hex.EncodeToString(sum[:]), Spec: raw}
}

func kpChart(name string, n int) *kpChartRef {
	return &kpChartRef{Repository: "oci://ghcr.io/example/charts", Name: name, Version: "1.0.0", Digest: testDigest(n)}
}

// kubepkgWrittenIndex returns an index in the forms kubepkg writes and
// accepts that kbuild never writes: build 0 (left out), a v-prefixed
// version, a component with path under a pinned OCIArtifact tree, specs
// that leave required fields empty ("path":"", "verbs":null), an unknown
// package field, and with newer a version whose spec has a field kbuild
// does not know.
func kubepkgWrittenIndex(t testing.TB, generated bool, newer bool) []byte {
	t.Helper()
	versions := []kpWVersion{
		kpVersion(t, kpSpec{Version: "1.9.0", Variants: []kpVariant{{Name: "default", Components: []kpComponent{{Name: "operator", Chart: kpChart("kubevirt", 1)}}}}}, nil),
		kpVersion(t, kpSpec{Version: "v1.8.0", Build: 2, Variants: []kpVariant{{Name: "default", Components: []kpComponent{{Name: "operator", Chart: kpChart("kubevirt", 2)}}}}}, nil),
		kpVersion(t, kpSpec{Version: "1.7.0", Build: 1,
			SourceRef:   &kpSourceRef{Kind: "OCIArtifact", URL: "oci://ghcr.io/example/tree@" + testDigest(3)},
			Permissions: &kpPermissions{Rules: []kpPolicyRule{{Resources: []string{"pods"}}}},
			Variants: []kpVariant{{Name: "default", Libraries: []kpLibrary{{Name: "common"}},
				Components: []kpComponent{{Name: "operator", Path: "kubevirt/charts/operator", Libraries: []string{"common"}}}}}}, nil),
	}
	if newer {
		versions = append([]kpWVersion{kpVersion(t, kpSpec{Version: "2.0.0", Build: 1, Variants: []kpVariant{{Name: "default", Components: []kpComponent{{Name: "operator", Chart: kpChart("kubevirt", 4)}}}}},
			map[string]any{"retries": 3, "rollout": map[string]any{
				"steps": []any{map[string]any{"weight": 10, "pause": true}, map[string]any{"weight": 100, "note": "line one\nline two\n"}},
				"empty": map[string]any{}, "none": []any{}, "off": nil, "tags": []any{"a", 1.5, false},
				"matrix": []any{[]any{"a", []any{"b", map[string]any{"c": 1}}}, []any{}}}})}, versions...)
	}
	x := kpWIndex{APIVersion: IndexAPIVersion, Kind: IndexKind, Mirror: "https://mirror.example.org", Packages: map[string]kpWPackage{
		"kubevirt": {Description: "Virtual machines", Keywords: []string{"virt"}, Versions: versions},
		"cdi":      {Versions: []kpWVersion{kpVersion(t, kpSpec{Version: "1.60.0", Variants: []kpVariant{{Name: "default", DependsOn: []string{"kubevirt"}, Components: []kpComponent{{Name: "cdi", Chart: kpChart("cdi", 5)}}}}}, nil)}},
	}}
	if generated {
		g := testTime.Add(-time.Hour)
		x.Generated = &g
	} else {
		x.APIVersion = ""
	}
	b, err := sigsyaml.Marshal(&x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mergeNewVersion adds kubevirt 1.10.0 build 1 to b, which holds a base,
// and returns the index b writes.
func mergeNewVersion(t *testing.T, b *Builder) []byte {
	t.Helper()
	if err := b.Add("dist/kubevirt-1.10.0-1.yaml", record("kubevirt", "1.10.0", 1), nil); err != nil {
		t.Fatal(err)
	}
	merged, err := b.Marshal(testTime, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return merged
}

// TestLenientRefusesDuplicateKeys checks that reading an index with a
// field kbuild does not know still refuses a key written twice, which
// readers resolve differently.
func TestLenientRefusesDuplicateKeys(t *testing.T) {
	data := string(kubepkgWrittenIndex(t, true, false))
	dup := strings.Replace(data, "kind: RepositoryIndex\n", "kind: RepositoryIndex\nkind: RepositoryIndex\n", 1)
	if _, err := ParseIndex([]byte(dup)); err == nil || !strings.Contains(err.Error(), `duplicate key "kind" (first on line 3)`) {
		t.Errorf("ParseIndex = %v, want a duplicate key refusal", err)
	}
	if _, err := ParseIndex([]byte(data)); err != nil {
		t.Errorf("ParseIndex of the index itself = %v", err)
	}
}

// TestFastReaderReadsKubepkgIndex checks that the fast reader reads the
// forms kubepkg writes itself, without giving up (so that size does not
// matter), and agrees with readLenient, which reads them as kubepkg's
// client does, on the index and on every unknown field and left-out
// version.
func TestFastReaderReadsKubepkgIndex(t *testing.T) {
	for _, tc := range []struct{ generated, newer bool }{{true, false}, {false, false}, {true, true}} {
		data := kubepkgWrittenIndex(t, tc.generated, tc.newer)
		fast, err := readIndexFast(data, false, keepAll)
		if err != nil {
			t.Fatalf("generated %v newer %v: the fast reader gave up: %v\n%s", tc.generated, tc.newer, err, data)
		}
		slow, err := readLenient(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("generated %v newer %v: fast and lenient readers differ\nfast %+v\nslow %+v", tc.generated, tc.newer, fast, slow)
		}
		if tc.newer && (len(fast.Packages["kubevirt"].Versions) != 3 || !slices.ContainsFunc(fast.Unknown, func(u UnknownField) bool { return u.Dropped })) {
			t.Errorf("the version with an unknown spec field is not left out: %+v", fast.Unknown)
		}
	}
}

// kubepkgIndexOf returns an index in the forms kubepkg writes
// (kubepkgWrittenIndex's kubevirt package, under n names, about 1.7 kB
// each): build 0 left out, a v-prefixed version, a component with path,
// unknown index and package fields, and, for the packages in newer, a
// version whose spec has fields kbuild does not know.
func kubepkgIndexOf(t testing.TB, n int, newer map[int]bool) []byte {
	t.Helper()
	blockOf := func(newer bool) (head, block string) {
		data := string(kubepkgWrittenIndex(t, true, newer))
		h, _, ok := strings.Cut(data, "packages:\n")
		i := strings.Index(data, "  kubevirt:\n")
		if !ok || i < 0 {
			t.Fatalf("unexpected fixture:\n%s", data)
		}
		return h + "packages:\n", data[i+len("  kubevirt:\n"):]
	}
	head, plain := blockOf(false)
	_, withNewer := blockOf(true)
	var sb strings.Builder
	sb.WriteString(head)
	for i := range n {
		fmt.Fprintf(&sb, "  pkg-%05d:\n", i)
		if newer[i] {
			sb.WriteString(withNewer)
		} else {
			sb.WriteString(plain)
		}
	}
	return []byte(sb.String())
}

// bigKubepkgIndex writes kubepkgIndexOf(n, newer) to dir, reads it back
// and checks that it is more than 16 MiB.
func bigKubepkgIndex(t *testing.T, dir string, n int, newer map[int]bool) []byte {
	t.Helper()
	path := filepath.Join(dir, "index.yaml")
	if err := os.WriteFile(path, kubepkgIndexOf(t, n, newer), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= MaxSlowYAML {
		t.Fatalf("the index is %d bytes, want more than %d", len(data), MaxSlowYAML)
	}
	return data
}

// TestLenientTypeErrors checks that a value of the wrong type in an index
// read as kubepkg reads it (which kubepkg's client refuses too) is refused
// naming package, version and field, whichever reader finds it: the fast
// one, sigs.k8s.io/yaml after the fast reader gave up elsewhere (a tag on
// a known field), or the fast one in an index of more than 16 MiB.
func TestLenientTypeErrors(t *testing.T) {
	small := string(kubepkgWrittenIndex(t, true, false))
	// A tag on a known field of the index: the fast reader gives up on the
	// document (in an unknown field it would check the value on its own).
	flow := strings.Replace(small, "kind: RepositoryIndex\n", "kind: !!str RepositoryIndex\n", 1)
	if flow == small {
		t.Fatal("flow edit not found")
	}
	big := string(bigKubepkgIndex(t, t.TempDir(), 10000, nil))
	k := strings.Index(big, "  pkg-05000:\n")
	for _, tc := range []struct {
		name, data, old, new, want string
	}{
		{"build a string", small, "    - build: 2\n", "    - build: \"x\"\n", `index: line 41: package kubevirt version v1.8.0 build "x": field build is a YAML string, want an integer`},
		{"spec build a word", small, "        build: 2\n", "        build: two\n", "index: line 44: package kubevirt version v1.8.0 build 2: field spec.build is a YAML string, want an integer"},
		{"chart a sequence", small, "          - chart:\n              digest: sha256:dbc1", "          - chart:\n            - digest: sha256:dbc1", "package kubevirt version v1.8.0 build 2: field spec.variants.components.chart is a YAML sequence, want a mapping"},
		{"description a mapping", small, "    description: Virtual machines\n", "    description:\n      en: Virtual machines\n", "index: package kubevirt: field description is a YAML mapping, want a string"},
		{"slow: build a string", flow, "    - build: 2\n", "    - build: \"x\"\n", `index: package kubevirt version v1.8.0 build "x": field build is a YAML string, want an integer`},
		{"slow: optional a word", flow, "          name: default\n        version: 1.60.0\n", "          name: default\n          requires:\n          - package: kubevirt\n            optional: maybe\n        version: 1.60.0\n", "index: package cdi version 1.60.0 build 0: field spec.variants.requires.optional is a YAML string, want true or false"},
		{"big: build a string", big[k:], "    - build: 2\n", "    - build: \"x\"\n", `package pkg-05000 version v1.8.0 build "x": field build is a YAML string, want an integer`},
		{"big: a key twice", big[k:], "    - build: 2\n", "    - build: 2\n      build: 2\n", `package pkg-05000: versions[1]: duplicate key "build" (YAML beyond what kbuild and kubepkg write is read only in files up to 16 MiB)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(tc.data, tc.old, tc.new, 1)
			if bad == tc.data {
				t.Fatal("test edit not found")
			}
			if strings.HasPrefix(tc.name, "big") {
				bad = big[:k] + bad
			}
			_, err := ParseIndex([]byte(bad))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseIndex = %v, want %q", err, tc.want)
			}
		})
	}
}
