package index_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestMerge(t *testing.T) {
	signer, _ := trust.GenerateKey(nil)
	base := index.BuildIndex(t, index.Record("kubevirt", "1.9.0", 4), index.Record("cdi", "1.66.1", 1))
	base.Expires = index.TestTime.Add(time.Hour)
	data, _ := base.Marshal()
	sigs, _ := trust.Sign(data, signer)
	sig, _ := index.MarshalSignatures(sigs)
	v, err := trust.Verify(data, sig, &trust.Trust{IndexKeys: []*trust.PublicKey{signer.Public()}}, trust.VerifyOptions{Now: index.TestTime.Add(2 * time.Hour), AllowExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "index expired") {
		t.Fatalf("an expired base is a warning for merging, got %q", v.Warnings)
	}

	b := index.NewBuilder()
	vsig, _ := trust.SignVersion(index.Record("kubevirt", "1.9.0", 4), signer)
	if err := b.Add("a", index.Record("kubevirt", "1.9.0", 4), []index.Signature{vsig}); err != nil { // same build again
		t.Fatal(err)
	}
	if err := b.Add("x", index.Record("kubevirt", "1.9.1", 4), []index.Signature{{KeyID: strings.Repeat("a", 64), Sig: "x"}}); err == nil || !strings.Contains(err.Error(), "x: signature is not the standard base64") {
		t.Fatalf("Add with a malformed signature = %v", err)
	}
	b.Add("b", index.Record("kubevirt", "1.10.0", 1), nil)
	built, _ := b.Index(index.TestTime.Add(time.Minute))
	x, err := mergeOver(v, built)
	if err != nil {
		t.Fatal(err)
	}
	if p, n := x.Counts(); p != 2 || n != 3 {
		t.Fatalf("merged index has %d packages, %d versions; want 2, 3", p, n)
	}
	if vs := x.Packages["kubevirt"].Versions; vs[0].Version != "1.10.0" || len(vs[1].Signatures) != 1 {
		t.Fatalf("merged versions %+v", vs)
	}

	changed := index.Record("kubevirt", "1.9.0", 4)
	changed.Spec.Images = []string{"registry.example.com/other@" + index.TestDigest(9)}
	b = index.NewBuilder()
	b.Add("c", changed, nil)
	built, _ = b.Index(index.TestTime.Add(time.Minute))
	_, err = mergeOver(v, built)
	var ce *index.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("Merge of a changed build = %v, want a *ConflictError", err)
	}
	d1, _ := index.Record("kubevirt", "1.9.0", 4).Spec.Digest()
	d2, _ := changed.Spec.Digest()
	want := "kubevirt 1.9.0 build 4 is already published with different content (published " + d1 + ", built " + d2 + "); published versions do not change, give the recipe a new build number"
	if err.Error() != want {
		t.Fatalf("conflict message:\n got %s\nwant %s", err, want)
	}

	older, _ := index.NewBuilder().Index(index.TestTime.Add(-time.Hour))
	if _, err := mergeOver(v, older); err == nil || !strings.Contains(err.Error(), "rollback") {
		t.Fatalf("Merge of an index generated before its base = %v", err)
	}
	if _, err := mergeOver(&trust.Verified{}, built); err == nil {
		t.Fatal("Merge over an unverified base must fail")
	}
}

// TestCompactBuilder checks that a compact Builder writes the same bytes as
// a full one and as Merge, with signatures, a base index, long folded
// strings and non-ASCII text (the yaml.v2 fallback).
func TestCompactBuilder(t *testing.T) {
	k := newTestKeys(t)
	rng := rand.New(rand.NewSource(9))
	var recs []*spec.PackageSource
	for p := 0; p < 6; p++ {
		for v := 0; v < 5; v++ {
			r := index.Record(fmt.Sprintf("pkg-%d", p), fmt.Sprintf("1.%d.0", v), 1+v%2)
			r.Spec.Variants[0].Components[0].Install.WaitStrategy = index.RandString(rng)
			r.Spec.Images = append(r.Spec.Images, index.RandString(rng))
			if v == 3 {
				r.Metadata.Annotations[index.DescriptionAnnotation] = "ünïcödé description\nwith a newline"
			}
			recs = append(recs, r)
		}
	}
	add := func(b *index.Builder, rs []*spec.PackageSource) {
		for i, r := range rs {
			var sigs []index.Signature
			if i%3 == 0 {
				s, _ := trust.SignVersion(r, k.team)
				sigs = []index.Signature{s}
			}
			if err := b.Add(fmt.Sprint(i), r, sigs); err != nil {
				t.Fatal(err)
			}
		}
	}
	full, compact := index.NewBuilder(), index.NewBuilder(index.Compact())
	add(full, recs)
	add(compact, recs)
	exp := index.TestTime.Add(time.Hour)
	want, err := full.Marshal(index.TestTime, exp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compact.Marshal(index.TestTime, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("compact Marshal differs:\n%s", index.FirstDiff(got, want))
	}
	x, _ := full.Index(index.TestTime)
	x.Expires = exp
	if viaSigs, _ := sigsyaml.Marshal(x); !bytes.Equal(want, viaSigs) {
		t.Fatalf("Builder.Marshal differs from sigs.k8s.io/yaml:\n%s", index.FirstDiff(want, viaSigs))
	}
	if _, err := compact.Index(index.TestTime); err == nil {
		t.Error("Index of a compact Builder must fail")
	}

	// Over a base: the first half published, the second half new, one
	// published version built again with a new signature.
	baseB := index.NewBuilder()
	add(baseB, recs[:15])
	baseData, _ := baseB.Marshal(index.TestTime, exp)
	base, err := trust.Verify(baseData, sigFile(t, baseData, k.index), &trust.Trust{IndexKeys: pubs(k.index)}, trust.VerifyOptions{Now: index.TestTime})
	if err != nil {
		t.Fatal(err)
	}
	later := index.TestTime.Add(time.Minute)
	builtB := index.NewBuilder()
	add(builtB, recs[14:])
	built, _ := builtB.Index(later)
	built.Expires = exp
	merged, err := mergeOver(base, built)
	if err != nil {
		t.Fatal(err)
	}
	want, _ = merged.Marshal()
	cb := index.NewBuilder(index.Compact())
	if err := trust.AddBase(cb, base); err != nil {
		t.Fatal(err)
	}
	add(cb, recs[14:])
	got, err = cb.Marshal(later, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("compact merge differs from Merge:\n%s", index.FirstDiff(got, want))
	}
	// The same, verifying and adding the base in one pass.
	cv := index.NewBuilder(index.Compact())
	if _, err := trust.AddVerifiedFunc(cv, baseData, sigFile(t, baseData, k.index), &trust.Trust{IndexKeys: pubs(k.index)}, trust.VerifyOptions{Now: index.TestTime}, nil); err != nil {
		t.Fatal(err)
	}
	add(cv, recs[14:])
	if got, err = cv.Marshal(later, exp); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("AddVerified differs from Merge: %v\n%s", err, index.FirstDiff(got, want))
	}
	if _, err := trust.AddVerifiedFunc(index.NewBuilder(index.Compact()), baseData, sigFile(t, baseData, k.stranger), &trust.Trust{IndexKeys: pubs(k.index)}, trust.VerifyOptions{Now: index.TestTime}, nil); !errors.As(err, new(*trust.VerificationError)) {
		t.Fatalf("AddVerified of a base signed by a stranger = %v", err)
	}
	if _, err := cb.Marshal(index.TestTime.Add(-time.Hour), exp); err == nil || !strings.Contains(err.Error(), "rollback") {
		t.Errorf("Marshal before the base's generated time = %v", err)
	}
	changed := index.Record("pkg-0", "1.0.0", 1)
	changed.Spec.Images = nil
	if err := cb.Add("changed.yaml", changed, nil); !errors.As(err, new(*index.ConflictError)) {
		t.Errorf("Add of a changed published version = %v, want a *ConflictError", err)
	}
}

// TestParsersRefuseAliasesAndSize: every parser caps its input and refuses
// YAML anchors and aliases (a billion-laughs document expands to
// gigabytes).
func TestParsersRefuseAliasesAndSize(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	parsers := map[string]func([]byte) error{
		"ParseIndex":      func(b []byte) error { _, err := index.ParseIndex(b); return err },
		"ParseRoot":       func(b []byte) error { _, err := trust.ParseRoot(b); return err },
		"ParseSignatures": func(b []byte) error { _, err := index.ParseSignatures(b); return err },
		"ParseRecord":     func(b []byte) error { _, err := index.ParseRecord(b); return err },
	}
	for name, parse := range parsers {
		if err := parse([]byte(bomb)); err == nil || !strings.Contains(err.Error(), "anchors and aliases are not allowed") {
			t.Errorf("%s of an alias bomb = %v", name, err)
		}
	}
	for name, tc := range map[string]struct {
		parse func([]byte) error
		max   int
	}{
		"ParseRoot":       {parsers["ParseRoot"], trust.MaxRootSize},
		"ParseSignatures": {parsers["ParseSignatures"], index.MaxSignaturesSize},
		"ParseRecord":     {parsers["ParseRecord"], index.MaxRecordSize},
	} {
		if err := tc.parse(make([]byte, tc.max+1)); err == nil || !strings.Contains(err.Error(), "more than the") {
			t.Errorf("%s of %d bytes = %v", name, tc.max+1, err)
		}
	}
}

// mergeOver merges a whole built index over a verified base, as
// publishing once did (a test helper now: publishing adds records to a
// Builder over the base instead).
func mergeOver(base *trust.Verified, built *index.RepositoryIndex) (*index.RepositoryIndex, error) {
	b := index.NewBuilder()
	if err := trust.AddBase(b, base); err != nil {
		return nil, err
	}
	return b.MergeIndex(built)
}
