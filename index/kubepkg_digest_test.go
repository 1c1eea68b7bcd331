package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/spec"
	sigsyaml "sigs.k8s.io/yaml"
)

// The types below mirror kubepkg's api/v1 PackageSourceSpec and the types
// it holds, and k8s.io/api rbac/v1 PolicyRule, field by field with their
// json tags, as kubepkg's pkg/repo SpecDigest encodes them with plain
// encoding/json. They are written from kubepkg's source, independently of
// this package's encoder, so that the digests they give are what a kubepkg
// subscriber computes.
type kpPackageSource struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name        string            `json:"name,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata,omitempty"`
	Spec kpSpec `json:"spec,omitempty"`
}

type kpSpec struct {
	Version     string         `json:"version,omitempty"`
	Build       int32          `json:"build,omitempty"`
	SourceRef   *kpSourceRef   `json:"sourceRef,omitempty"`
	Provides    []string       `json:"provides,omitempty"`
	Conflicts   []string       `json:"conflicts,omitempty"`
	CRDs        []string       `json:"crds,omitempty"`
	Permissions *kpPermissions `json:"permissions,omitempty"`
	Rollback    *kpRollback    `json:"rollback,omitempty"`
	Variants    []kpVariant    `json:"variants,omitempty"`
	Images      []string       `json:"images,omitempty"`
}

type kpPermissions struct {
	ClusterWide bool           `json:"clusterWide,omitempty"`
	Rules       []kpPolicyRule `json:"rules,omitempty"`
}

// kpPolicyRule is k8s.io/api/rbac/v1.PolicyRule: verbs has no omitempty.
type kpPolicyRule struct {
	Verbs           []string `json:"verbs"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

type kpRollback struct {
	Safe bool `json:"safe,omitempty"`
}

type kpVariant struct {
	Name       string          `json:"name"`
	DependsOn  []string        `json:"dependsOn,omitempty"`
	Requires   []kpRequirement `json:"requires,omitempty"`
	Libraries  []kpLibrary     `json:"libraries,omitempty"`
	Components []kpComponent   `json:"components,omitempty"`
}

type kpRequirement struct {
	Package    string `json:"package,omitempty"`
	Capability string `json:"capability,omitempty"`
	Version    string `json:"version,omitempty"`
	Optional   bool   `json:"optional,omitempty"`
}

type kpLibrary struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path"`
}

type kpSourceRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	URL       string `json:"url,omitempty"`
	Path      string `json:"path,omitempty"`
}

type kpInstall struct {
	ReleaseName      string             `json:"releaseName,omitempty"`
	Namespace        string             `json:"namespace,omitempty"`
	Privileged       bool               `json:"privileged,omitempty"`
	DependsOn        []string           `json:"dependsOn,omitempty"`
	UpgradeCRDs      string             `json:"upgradeCRDs,omitempty"`
	WaitStrategy     string             `json:"waitStrategy,omitempty"`
	HealthCheckExprs []kpHealthCheck    `json:"healthCheckExprs,omitempty"`
	Phase            string             `json:"phase,omitempty"`
	ReadyWhen        []kpReadyCondition `json:"readyWhen,omitempty"`
}

type kpReadyCondition struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	Condition  string `json:"condition"`
	Status     string `json:"status,omitempty"`
}

type kpChartRef struct {
	Repository string `json:"repository"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	Digest     string `json:"digest,omitempty"`
}

type kpComponent struct {
	Name        string      `json:"name"`
	Path        string      `json:"path,omitempty"`
	Chart       *kpChartRef `json:"chart,omitempty"`
	Install     *kpInstall  `json:"install,omitempty"`
	Libraries   []string    `json:"libraries,omitempty"`
	ValuesFiles []string    `json:"valuesFiles,omitempty"`
}

type kpHealthCheck struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Current    string `json:"current"`
	InProgress string `json:"inProgress,omitempty"`
	Failed     string `json:"failed,omitempty"`
}

// kpIndex is kubepkg's pkg/repo Index as its Parse reads it.
type kpIndex struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Packages   map[string]struct {
		Versions []struct {
			Version string `json:"version"`
			Build   int32  `json:"build,omitempty"`
			Digest  string `json:"digest"`
			Spec    kpSpec `json:"spec"`
		} `json:"versions"`
	} `json:"packages"`
}

// kpDigest is kubepkg's SpecDigest: sha256 of encoding/json's output.
func kpDigest(t *testing.T, s *kpSpec) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// kpParseIndex checks an index as kubepkg's repo.Parse does: every
// version's spec, decoded leniently with sigs.k8s.io/yaml, must encode to
// its digest; it returns the versions that do not.
func kpParseIndex(t *testing.T, raw []byte) (checked int, bad []string) {
	t.Helper()
	var x kpIndex
	if err := sigsyaml.Unmarshal(raw, &x); err != nil {
		t.Fatalf("kubepkg cannot decode the index: %v", err)
	}
	if x.Kind != IndexKind {
		t.Fatalf("kubepkg: kind %q", x.Kind)
	}
	for name, p := range x.Packages {
		for _, v := range p.Versions {
			checked++
			if v.Spec.Version != v.Version || v.Spec.Build != v.Build {
				bad = append(bad, fmt.Sprintf("%s %s: entry and spec disagree", name, v.Version))
			}
			if d := kpDigest(t, &v.Spec); d != v.Digest {
				bad = append(bad, fmt.Sprintf("%s %s build %d: spec does not match its digest (index %s, kubepkg %s)", name, v.Version, v.Build, v.Digest, d))
			}
		}
	}
	return checked, bad
}

type digestVector struct {
	name string
	doc  []byte
}

func readDigestVectors(t *testing.T) []digestVector {
	t.Helper()
	raw, err := os.ReadFile("testdata/kubepkg-digests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []digestVector
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(doc, "---\n"), "# "), "\n")
		out = append(out, digestVector{name: name, doc: []byte(doc)})
	}
	return out
}

const digestGolden = "testdata/kubepkg-digests.golden"

// TestKubepkgDigestVectors pins the spec digest to what kubepkg computes:
// for every spec shape in testdata/kubepkg-digests.yaml (every optional
// and required field empty and present, unicode, HTML characters, nested
// variants, meta packages), kbuild's digest of the record as its reader
// reads it must equal the digest of the mirror types above and the golden
// digest, and the record kbuild writes back must give kubepkg the same
// digest again. -update rewrites the golden file from the mirror types.
func TestKubepkgDigestVectors(t *testing.T) {
	vectors := readDigestVectors(t)
	if len(vectors) < 40 {
		t.Fatalf("%d digest vectors, want at least 40", len(vectors))
	}
	var golden bytes.Buffer
	want := map[string]string{}
	if !*update {
		raw, err := os.ReadFile(digestGolden)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			name, d, _ := strings.Cut(line, " ")
			want[name] = d
		}
		if len(want) != len(vectors) {
			t.Errorf("%s has %d digests for %d vectors; run go test ./index -run TestKubepkgDigestVectors -update", digestGolden, len(want), len(vectors))
		}
	}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			var src kpPackageSource
			if err := sigsyaml.UnmarshalStrict(v.doc, &src); err != nil {
				t.Fatalf("kubepkg cannot decode the vector: %v", err)
			}
			kp := kpDigest(t, &src.Spec)
			fmt.Fprintf(&golden, "%s %s\n", v.name, kp)
			if !*update && want[v.name] != kp {
				t.Errorf("golden digest %s, kubepkg mirror %s", want[v.name], kp)
			}
			rec, err := ParseRecord(v.doc)
			if err != nil {
				t.Fatalf("ParseRecord: %v", err)
			}
			got, err := rec.Spec.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if got != kp {
				kj, _ := json.Marshal(&src.Spec)
				t.Errorf("Digest() = %s, kubepkg %s\n ours   %s\n kubepkg %s", got, kp, spec.AppendJSON(nil, &rec.Spec), kj)
			}
			// What kbuild writes must read back, in kubepkg, to the
			// same digest.
			out, err := MarshalRecord(rec)
			if err != nil {
				t.Fatal(err)
			}
			var back kpPackageSource
			if err := sigsyaml.UnmarshalStrict(out, &back); err != nil {
				t.Fatalf("kubepkg cannot decode the record kbuild wrote: %v\n%s", err, out)
			}
			if d := kpDigest(t, &back.Spec); d != kp {
				t.Errorf("record written by kbuild reads in kubepkg as %s, want %s\n%s", d, kp, out)
			}
		})
	}
	if *update {
		if err := os.WriteFile(digestGolden, golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMirrorMatchesTypes checks the mirror types against this package's
// types on random specs, empty and nil lists included, so that a field the
// vectors miss is still compared.
func TestMirrorMatchesTypes(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		s := randSpec(rng)
		js, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		var kp kpSpec
		if err := json.Unmarshal(js, &kp); err != nil {
			t.Fatal(err)
		}
		if got, want := string(spec.AppendJSON(nil, &s)), mustJSON(t, &kp); got != want {
			t.Fatalf("case %d:\n ours    %s\n kubepkg %s", i, got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestIndexReadsInKubepkg builds an index of the vectors kbuild accepts
// and checks it as kubepkg's Parse does: every digest must match.
func TestIndexReadsInKubepkg(t *testing.T) {
	b := NewBuilder()
	added := 0
	for _, v := range readDigestVectors(t) {
		rec, err := ParseRecord(v.doc)
		if err != nil {
			t.Fatal(err)
		}
		if CheckRecord(rec) != nil {
			continue
		}
		if err := b.Add(v.name, rec, nil); err != nil {
			t.Fatal(err)
		}
		added++
	}
	if added < 10 {
		t.Fatalf("only %d vectors can enter an index", added)
	}
	raw, err := b.Marshal(time.Unix(1791633600, 0), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	n, bad := kpParseIndex(t, raw)
	if n != added || len(bad) > 0 {
		t.Fatalf("kubepkg checked %d of %d versions; refused: %v", n, added, bad)
	}
}

// TestCheckRecordRefusesRequiredEmpty checks that a record leaving empty a
// field kubepkg's schema requires cannot enter an index, and that the
// error names the field.
func TestCheckRecordRefusesRequiredEmpty(t *testing.T) {
	want := map[string]string{
		"rule-verbs-missing":           "spec.permissions.rules[0].verbs",
		"rule-verbs-empty-list":        "spec.permissions.rules[0].verbs",
		"library-path-missing":         "spec.variants[0].libraries[0].path",
		"variant-name-missing":         "spec.variants[0].name",
		"component-name-missing":       "spec.variants[0].components[0].name",
		"healthcheck-required-missing": "spec.variants[0].components[0].install.healthCheckExprs[0].apiVersion",
		"readywhen-some-missing":       "spec.variants[0].components[0].install.readyWhen[0].apiVersion",
		"sourceref-kind-empty":         "spec.sourceRef.kind",
	}
	found := 0
	for _, v := range readDigestVectors(t) {
		field, ok := want[v.name]
		if !ok {
			continue
		}
		found++
		rec, err := ParseRecord(v.doc)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckRecord(rec)
		if err == nil || !strings.Contains(err.Error(), field+" is empty") {
			t.Errorf("%s: CheckRecord = %v, want an error naming %s", v.name, err, field)
		}
	}
	if found != len(want) {
		t.Fatalf("found %d of %d vectors", found, len(want))
	}
	ok := &spec.PackageSpec{Variants: []spec.Variant{{Name: "a", Libraries: []spec.Library{{Path: "p"}}}}}
	if e := spec.RequiredEmpty(ok); len(e) != 0 {
		t.Errorf("RequiredEmpty(complete spec) = %v", e)
	}
}
