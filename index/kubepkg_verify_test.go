package index_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestReadKubepkgWrittenIndex verifies and merges over indexes in the
// forms kubepkg writes: everything kubepkg's client accepts is accepted,
// unknown fields are named in warnings, a version with an unknown spec
// field is left out and blocks a merge, and the merged index kbuild
// writes is accepted by kubepkg's client with every digest.
func TestReadKubepkgWrittenIndex(t *testing.T) {
	keys := newTestKeys(t)
	tr := &trust.Trust{IndexKeys: pubs(keys.index)}
	opts := trust.VerifyOptions{Now: index.TestTime}
	for _, tc := range []struct {
		name             string
		generated, newer bool
		versions         int
		warnings         []string
		leftOut          string
	}{
		{name: "kubepkg index", generated: true, versions: 4,
			warnings: []string{"index.yaml: field mirror is not known to kbuild; ignored", "kubevirt", "field keywords is not known"}},
		{name: "no generated time or apiVersion", versions: 4,
			warnings: []string{"no generated time"}},
		{name: "version built by a newer kubepkg", generated: true, newer: true, versions: 4,
			warnings: []string{"kubevirt 2.0.0 build 1: field spec.variants[0].retries is not known to kbuild", "this version is left out"},
			leftOut:  "kubevirt 2.0.0 build 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := index.KubepkgWrittenIndex(t, tc.generated, tc.newer)
			if n, bad := index.KpParseIndex(t, data); len(bad) > 0 && !tc.newer || n == 0 {
				t.Fatalf("the fixture is not an index kubepkg accepts: %v", bad)
			}
			v, err := trust.Verify(data, sigFile(t, data, keys.index), tr, opts)
			if err != nil {
				t.Fatalf("Verify = %v, want the index accepted as kubepkg accepts it\n%s", err, data)
			}
			if v.Versions != tc.versions {
				t.Errorf("Versions = %d, want %d", v.Versions, tc.versions)
			}
			all := strings.Join(v.Warnings, "\n")
			for _, w := range tc.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("warnings = %q, want one containing %q", all, w)
				}
			}
			b := index.NewBuilder()
			err = trust.AddBase(b, v)
			if tc.leftOut != "" {
				if err == nil || !strings.Contains(err.Error(), tc.leftOut) || !strings.Contains(err.Error(), "merging would drop them") {
					t.Fatalf("AddBase = %v, want a refusal naming %s", err, tc.leftOut)
				}
				return
			}
			if err != nil {
				t.Fatalf("AddBase = %v", err)
			}
			merged := index.MergeNewVersion(t, b)
			n, bad := index.KpParseIndex(t, merged)
			if n != tc.versions+1 || len(bad) > 0 {
				t.Fatalf("kubepkg reads the merged index with %d versions (want %d), refusing %v\n%s", n, tc.versions+1, bad, merged)
			}
			if _, err := trust.Verify(merged, sigFile(t, merged, keys.index), tr, opts); err != nil {
				t.Fatalf("Verify(merged) = %v", err)
			}
		})
	}
}

// TestKubepkgIndexStaysStrict checks that reading kubepkg's forms leaves
// the security checks as they were: a spec changed after signing, a
// signature by another key, and an expired index are refused, naming the
// version where one is at fault.
func TestKubepkgIndexStaysStrict(t *testing.T) {
	keys := newTestKeys(t)
	tr := &trust.Trust{IndexKeys: pubs(keys.index)}
	data := index.KubepkgWrittenIndex(t, true, false)
	tampered := []byte(strings.Replace(string(data), "name: cdi\n", "name: cdi-evil\n", 1))
	if string(tampered) == string(data) {
		t.Fatal("test edit not found")
	}
	_, err := trust.Verify(tampered, sigFile(t, tampered, keys.index), tr, trust.VerifyOptions{Now: index.TestTime})
	var ve *trust.VerificationError
	if !errors.As(err, &ve) || !errors.Is(err, trust.ErrDigest) || !strings.Contains(err.Error(), "cdi 1.60.0 build 0") {
		t.Errorf("tampered spec: Verify = %v, want ErrDigest naming cdi 1.60.0 build 0", err)
	}
	if _, err := trust.Verify(data, sigFile(t, data, keys.stranger), tr, trust.VerifyOptions{Now: index.TestTime}); !errors.Is(err, trust.ErrNotSigned) {
		t.Errorf("other key: Verify = %v, want ErrNotSigned", err)
	}
	x := index.KpWIndex{Kind: index.IndexKind, Packages: map[string]index.KpWPackage{}}
	g, e := index.TestTime.Add(-48*time.Hour), index.TestTime.Add(-time.Hour)
	x.Generated, x.Expires = &g, &e
	expired, _ := sigsyaml.Marshal(&x)
	if _, err := trust.Verify(expired, sigFile(t, expired, keys.index), tr, trust.VerifyOptions{Now: index.TestTime}); !errors.Is(err, trust.ErrExpired) {
		t.Errorf("expired: Verify = %v, want ErrExpired", err)
	}
}

// TestRelocate moves a verified base's charts to another registry path,
// as kubepkg repo index --relocate does: the moved versions get new
// digests that verify, Relocated lists them for the registry check, and a
// version with delegated signatures is refused.
func TestRelocate(t *testing.T) {
	keys := newTestKeys(t)
	moved := index.Record("kubevirt", "1.9.0", 1)
	kept := index.Record("cdi", "1.60.0", 1)
	kept.Spec.Variants[0].Components[0].Chart.Repository = "oci://other.example.com/cdi"
	data, sig := signed(t, index.BuildIndex(t, moved, kept), keys.index)
	opts := trust.VerifyOptions{Now: index.TestTime.Add(time.Hour)}
	for _, compact := range []bool{false, true} {
		b := index.NewBuilder(index.Relocate(map[string]string{"oci://registry.example.com": "oci://mirror.example.org/pkgs"}))
		if compact {
			b = index.NewBuilder(index.Compact(), index.Relocate(map[string]string{"oci://registry.example.com": "oci://mirror.example.org/pkgs"}))
		}
		if _, err := trust.AddVerifiedFunc(b, data, sig, &trust.Trust{IndexKeys: pubs(keys.index)}, opts, nil); err != nil {
			t.Fatal(err)
		}
		r := b.Relocated()
		if r == nil || len(r.Packages) != 1 || r.Packages["kubevirt"] == nil {
			t.Fatalf("compact %v: Relocated = %+v, want kubevirt only", compact, r)
		}
		if got := r.Packages["kubevirt"].Versions[0].Spec.Variants[0].Components[0].Chart.Repository; got != "oci://mirror.example.org/pkgs/kubevirt" {
			t.Errorf("compact %v: moved repository %s", compact, got)
		}
		out, err := b.Marshal(index.TestTime.Add(2*time.Hour), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "repository: oci://registry.example.com") || !strings.Contains(string(out), "oci://other.example.com/cdi") {
			t.Errorf("compact %v: merged index:\n%s", compact, out)
		}
		if _, err := trust.Verify(out, sigFile(t, out, keys.index), &trust.Trust{IndexKeys: pubs(keys.index)}, trust.VerifyOptions{Now: index.TestTime.Add(3 * time.Hour)}); err != nil {
			t.Errorf("compact %v: the relocated index does not verify: %v", compact, err)
		}
	}
	withSig := index.Record("kubevirt", "1.9.0", 1)
	x := index.BuildIndex(t, withSig)
	x.Packages["kubevirt"].Versions[0].Signatures = []index.Signature{{KeyID: strings.Repeat("a", 64), Sig: base64.StdEncoding.EncodeToString(make([]byte, 64))}}
	data, sig = signed(t, x, keys.index)
	b := index.NewBuilder(index.Relocate(map[string]string{"oci://registry.example.com": "oci://mirror.example.org"}))
	if _, err := trust.AddVerifiedFunc(b, data, sig, &trust.Trust{IndexKeys: pubs(keys.index)}, opts, nil); err == nil || !strings.Contains(err.Error(), "kubevirt 1.9.0 build 1 carries delegated signatures") {
		t.Errorf("relocating a signed version: %v", err)
	}
}

// TestLegacyDigest checks the refusal of a version whose digest kbuild
// computed before it followed kubepkg's types (a library without path
// left out): kubepkg refuses it, and so does Verify, saying why.
func TestLegacyDigest(t *testing.T) {
	keys := newTestKeys(t)
	x := index.BuildIndex(t, index.Record("kubevirt", "1.9.0", 1))
	v := &x.Packages["kubevirt"].Versions[0]
	v.Spec.Variants[0].Libraries = []spec.Library{{Name: "common"}}
	v.Digest = spec.DigestOf(spec.AppendJSONOf(nil, &v.Spec, true))
	data, sig := signed(t, x, keys.index)
	if _, bad := index.KpParseIndex(t, data); len(bad) != 1 {
		t.Fatalf("kubepkg refuses %v, want the version", bad)
	}
	_, err := trust.Verify(data, sig, &trust.Trust{IndexKeys: pubs(keys.index)}, trust.VerifyOptions{Now: index.TestTime.Add(time.Hour)})
	if !errors.Is(err, trust.ErrDigest) || !strings.Contains(err.Error(), "leaves out the empty spec.variants[0].libraries[0].path, as kbuild computed digests before") {
		t.Fatalf("Verify = %v", err)
	}
	v.Digest = index.TestDigest(9)
	data, sig = signed(t, x, keys.index)
	if _, err := trust.Verify(data, sig, &trust.Trust{IndexKeys: pubs(keys.index)}, trust.VerifyOptions{Now: index.TestTime.Add(time.Hour)}); !errors.Is(err, trust.ErrDigest) || !strings.Contains(err.Error(), "the spec was changed after it was published") {
		t.Fatalf("Verify of another digest = %v", err)
	}
}

// TestReadBigKubepkgIndex verifies and merges over kubepkg-written indexes
// of more than 16 MiB, which are never decoded with sigs.k8s.io/yaml: every
// form kubepkg's client accepts is accepted, each unknown field is named
// in a warning, the versions with unknown spec fields (in two different
// parts of the parallel read) are left out and block a merge, and digest
// checks stay on.
func TestReadBigKubepkgIndex(t *testing.T) {
	keys := newTestKeys(t)
	tr := &trust.Trust{IndexKeys: pubs(keys.index)}
	opts := trust.VerifyOptions{Now: index.TestTime}
	const n = 10000
	data := index.BigKubepkgIndex(t, t.TempDir(), n, map[int]bool{7: true, n - 3: true})
	v, err := trust.Verify(data, sigFile(t, data, keys.index), tr, opts)
	if err != nil {
		t.Fatalf("Verify = %v", err)
	}
	if v.Packages != n || v.Versions != 3*n {
		t.Errorf("Verify: %d packages, %d versions; want %d, %d", v.Packages, v.Versions, n, 3*n)
	}
	wantLeftOut := []string{"pkg-00007 2.0.0 build 1", fmt.Sprintf("pkg-%05d 2.0.0 build 1", n-3)}
	if !slices.Equal(v.LeftOut, wantLeftOut) {
		t.Errorf("LeftOut = %q, want %q", v.LeftOut, wantLeftOut)
	}
	counts := map[string]int{}
	for _, w := range v.Warnings {
		switch {
		case w == "index.yaml: field mirror is not known to kbuild; ignored, as kubepkg ignores it":
			counts["mirror"]++
		case strings.HasPrefix(w, "package pkg-") && strings.HasSuffix(w, ": field keywords is not known to kbuild; ignored, as kubepkg ignores it"):
			counts["keywords"]++
		case strings.Contains(w, " 2.0.0 build 1: field spec.variants[0].retries is not known to kbuild") && strings.Contains(w, "this version is left out"):
			counts["retries"]++
		case strings.Contains(w, " 2.0.0 build 1: field spec.variants[0].rollout is not known to kbuild"):
			counts["rollout"]++
		default:
			t.Errorf("unexpected warning %q", w)
		}
	}
	if want := map[string]int{"mirror": 1, "keywords": n, "retries": 2, "rollout": 2}; !reflect.DeepEqual(counts, want) {
		t.Errorf("warnings by field %v, want %v", counts, want)
	}
	if err := trust.AddBase(index.NewBuilder(), v); err == nil || !strings.Contains(err.Error(), strings.Join(wantLeftOut, ", ")) {
		t.Errorf("AddBase = %v, want a refusal naming %q", err, wantLeftOut)
	}

	// A spec changed after signing is refused, naming its version.
	k := strings.Index(string(data), "  pkg-05000:\n")
	tampered := []byte(string(data[:k]) + strings.Replace(string(data[k:]), "name: operator\n", "name: operator-evil\n", 1))
	if _, err := trust.Verify(tampered, sigFile(t, tampered, keys.index), tr, opts); !errors.Is(err, trust.ErrDigest) || !strings.Contains(err.Error(), "pkg-05000 2.0.0") && !strings.Contains(err.Error(), "pkg-05000 1.9.0 build 0") {
		t.Errorf("tampered spec: Verify = %v, want ErrDigest naming pkg-05000 1.9.0 build 0", err)
	}

	// Without the newer versions the index merges; what kbuild writes
	// keeps kubepkg's versions and none of the unknown fields.
	data = index.BigKubepkgIndex(t, t.TempDir(), n, nil)
	v, err = trust.Verify(data, sigFile(t, data, keys.index), tr, opts)
	if err != nil {
		t.Fatalf("Verify = %v", err)
	}
	b := index.NewBuilder()
	if err := trust.AddBase(b, v); err != nil {
		t.Fatalf("AddBase = %v", err)
	}
	merged := index.MergeNewVersion(t, b)
	mv, err := trust.Verify(merged, sigFile(t, merged, keys.index), tr, opts)
	if err != nil {
		t.Fatalf("Verify(merged) = %v", err)
	}
	if mv.Versions != 3*n+1 || len(mv.Warnings) != 0 {
		t.Errorf("merged: %d versions, warnings %q; want %d and none", mv.Versions, mv.Warnings, 3*n+1)
	}
	if s := string(merged); !strings.Contains(s, "version: v1.8.0") || !strings.Contains(s, "path: kubevirt/charts/operator") || strings.Contains(s, "keywords") || strings.Contains(s, "mirror:") {
		t.Errorf("merged index keeps unknown fields or loses kubepkg's versions")
	}
}
