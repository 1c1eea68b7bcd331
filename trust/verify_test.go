package trust

import (
	"errors"
	"kbuild.dev/kbuild/index"
	"strings"
	"testing"
	"time"
)

// rootFile returns a root of version v with content c signed by keys.
func rootFile(t testing.TB, v int, c RootConfig, keys ...*PrivateKey) []byte {
	t.Helper()
	r, err := c.root(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := r.Sign(k); err != nil {
			t.Fatal(err)
		}
	}
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rootDigest(t testing.TB, b []byte) string {
	r, err := ParseRoot(b)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := r.Digest()
	return d
}

// TestVerifyRefusals runs Verify on tampered, stale and badly signed
// sites; each refusal is a *VerificationError of the right kind whose
// message names the problem.
func TestVerifyRefusals(t *testing.T) {
	k := newTestKeys(t)
	now := testTime.Add(24 * time.Hour)
	x := buildIndex(t, record("kubevirt", "1.9.0", 4), record("cdi", "1.66.1", 1))
	x.Expires = testTime.Add(30 * 24 * time.Hour)
	data, sig := signed(t, x, k.index)
	plain := &Trust{IndexKeys: pubs(k.index)}

	older := buildIndex(t, record("kubevirt", "1.9.0", 3))
	older.Generated = testTime.Add(-time.Hour)
	older.Expires = x.Expires
	oldData, oldSig := signed(t, older, k.index)

	cfg := func(expires time.Time, root ...*PrivateKey) RootConfig {
		return RootConfig{Expires: expires, RootKeys: pubs(root...), RootThreshold: len(root), IndexKeys: pubs(k.index), IndexThreshold: 1}
	}
	year := testTime.Add(365 * 24 * time.Hour)
	r1 := rootFile(t, 1, cfg(year, k.rootA, k.rootB), k.rootA, k.rootB)
	r2 := rootFile(t, 2, cfg(year, k.rootA, k.rootC), k.rootA, k.rootB, k.rootC)
	r2NewOnly := rootFile(t, 2, cfg(year, k.rootC), k.rootC)
	r1Other := rootFile(t, 1, cfg(year.Add(time.Hour), k.rootA, k.rootB), k.rootA, k.rootB)
	r1Expired := rootFile(t, 1, cfg(testTime.Add(time.Hour), k.rootA, k.rootB), k.rootA, k.rootB)
	r3 := rootFile(t, 3, cfg(year, k.rootA, k.rootC), k.rootA, k.rootC)
	rootTrust := func(latest []byte, chain ...[]byte) *Trust {
		return &Trust{RootKeys: pubs(k.rootA, k.rootB), RootThreshold: 2, Roots: chain, Latest: latest}
	}

	edited := strings.Replace(string(data), "- kubevirt\n", "- kubevirt-edited\n", 1)
	noExpiry := buildIndex(t, record("kubevirt", "1.9.0", 4))
	noExpData, noExpSig := signed(t, noExpiry, k.index)
	expired := buildIndex(t, record("kubevirt", "1.9.0", 4))
	expired.Expires = testTime.Add(time.Hour)
	expData, expSig := signed(t, expired, k.index)
	future := buildIndex(t, record("kubevirt", "1.9.0", 4))
	future.Generated = now.Add(time.Hour)
	future.Expires = now.Add(48 * time.Hour)
	futData, futSig := signed(t, future, k.index)
	flip := func(b []byte, at int) []byte {
		c := append([]byte(nil), b...)
		c[at] ^= 0x01
		return c
	}

	tests := []struct {
		name      string
		data, sig []byte
		trust     *Trust
		state     *State
		kind      error
		want      string
	}{
		{"flipped byte in index.yaml", flip(data, len(data)/2), sig, plain, nil, ErrNotSigned, "index is not signed by a trusted key: 0 valid signature(s)"},
		{"flipped byte in index.yaml.sig", data, flip(sig, 10), plain, nil, ErrNotSigned, "index is not signed by a trusted key"},
		{"signature by an untrusted key", data, sigFile(t, data, k.stranger), plain, nil, ErrNotSigned, "index is not signed by a trusted key: 0 valid signature(s) by the 1 trusted key(s)"},
		{"signature replayed from an older index", data, oldSig, plain, nil, ErrNotSigned, "index is not signed by a trusted key"},
		{"missing signature", data, nil, plain, nil, ErrNotSigned, "index.yaml.sig is missing"},
		{"threshold not met", data, sig, &Trust{IndexKeys: pubs(k.index, k.index2), Threshold: 2}, nil, ErrNotSigned, "index.yaml.sig has 1 signature(s), 2 needed"},
		{"spec edited with its digest left", []byte(edited), sigFile(t, []byte(edited), k.index), plain, nil, ErrDigest, "kubevirt 1.9.0 build 4: spec does not match its digest: the entry says sha256:"},
		{"expired index", expData, expSig, plain, nil, ErrExpired, "index expired at 2026-10-10T13:00:00Z (reference time 2026-10-11T12:00:00Z)"},
		{"generated in the future", futData, futSig, plain, nil, ErrFuture, "is in the future"},
		{"index older than the state", oldData, oldSig, plain, &State{Generated: testTime}, ErrRollback, "index generated 2026-10-10T11:00:00Z is older than the index accepted before (generated 2026-10-10T12:00:00Z): refusing a rollback"},
		{"index without expires under a root", noExpData, noExpSig, rootTrust(r1, r1), nil, ErrExpired, "index has no expires"},
		{"expired root", data, sig, rootTrust(r1Expired, r1Expired), nil, ErrExpired, "root version 1 expired at 2026-10-10T13:00:00Z"},
		{"root chain skips a version (file missing)", data, sig, rootTrust(r3, r1, nil, r3), nil, ErrRootChain, "root/2.yaml: missing: the root chain skips version 2"},
		{"root chain skips a version", data, sig, rootTrust(r3, r1, r3, r3), nil, ErrRootChain, "root/2.yaml: has version 3, want 2: the root chain skips a version"},
		{"root chain repeats a version", data, sig, rootTrust(r2, r1, r1), nil, ErrRootChain, "root/2.yaml: has version 1, want 2: the root chain repeats a version"},
		{"root chain forks from the state", data, sig, rootTrust(r1Other, r1Other), &State{Generated: testTime, RootVersion: 1, RootDigest: rootDigest(t, r1)}, ErrFork, "root/1.yaml: root version 1 is sha256:"},
		{"root older than the state", data, sig, rootTrust(r1, r1), &State{Generated: testTime, RootVersion: 2, RootDigest: rootDigest(t, r2)}, ErrRollback, "root version 1 is older than the version 2 accepted before"},
		{"root v2 signed only by the new keys", data, sig, rootTrust(r2NewOnly, r1, r2NewOnly), nil, ErrNotSigned, "root/2.yaml: root version 2 is not signed by the root keys of version 1: 0 valid signature(s)"},
		{"root v1 not signed by the pinned keys", data, sig, &Trust{RootKeys: pubs(k.stranger), Roots: [][]byte{r1}, Latest: r1}, nil, ErrNotSigned, "root version 1 is not signed by the pinned root keys"},
		{"root.yaml differs from the chain", data, sig, rootTrust(r1Other, r1), nil, ErrFork, "root.yaml: version 1 (sha256:"},
		{"root.yaml missing", data, sig, rootTrust(nil), nil, ErrRootChain, "root.yaml is missing"},
		{"index signed by a key outside the index role", data, sigFile(t, data, k.rootA), rootTrust(r1, r1), nil, ErrNotSigned, "index is not signed by a trusted key"},
		{"state recorded under a root, verified without", data, sig, plain, &State{Generated: testTime, RootVersion: 1, RootDigest: rootDigest(t, r1)}, ErrRootChain, "no root of trust was given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.data, tc.sig, tc.trust, VerifyOptions{Now: now, State: tc.state})
			var ve *VerificationError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want a *VerificationError", err)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("Verify = %v, want kind %v", err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify = %q, want it to contain %q", err, tc.want)
			}
		})
	}

	// The same sites verify when nothing is wrong.
	for _, tc := range []struct {
		name  string
		trust *Trust
		state *State
	}{
		{"index key", plain, nil},
		{"root chain with a rotation", rootTrust(r2, r1, r2), &State{Generated: testTime, RootVersion: 1, RootDigest: rootDigest(t, r1)}},
	} {
		v, err := Verify(data, sig, tc.trust, VerifyOptions{Now: now, State: tc.state})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v.Packages != 2 || v.Versions != 2 || len(v.SignedBy) != 1 || v.Keys != 1 || !v.Expires.Equal(x.Expires) || len(v.Index.Packages) != 2 {
			t.Errorf("%s: summary %+v", tc.name, v)
		}
		d, err := Verify(data, sig, tc.trust, VerifyOptions{Now: now, State: tc.state, DiscardIndex: true})
		if err != nil || d.Index != nil || d.Packages != 2 || d.Versions != 2 || d.State != v.State {
			t.Errorf("%s: DiscardIndex: %+v, %v", tc.name, d, err)
		}
		if err := AddBase(index.NewBuilder(), d); err == nil {
			t.Errorf("%s: AddBase of a discarded index must fail", tc.name)
		}
		if tc.state != nil && (v.State.RootVersion != 2 || v.State.RootDigest != rootDigest(t, r2) || !v.State.Generated.Equal(testTime)) {
			t.Errorf("%s: new state %+v", tc.name, v.State)
		}
	}
	if _, err := Verify(data, sig, plain, VerifyOptions{}); err == nil || errors.As(err, new(*VerificationError)) {
		t.Errorf("Verify without a reference time = %v, want a usage error", err)
	}
}

// TestVerifyDelegations: a version of a delegated package counts only with
// the delegation's threshold of signatures; one without is dropped with a
// warning and the others are kept.
func TestVerifyDelegations(t *testing.T) {
	k := newTestKeys(t)
	now := testTime.Add(time.Hour)
	signedRec := record("kubevirt", "1.9.0", 4)
	unsigned := record("kubevirt", "1.9.1", 1)
	wrongKey := record("cdi", "1.66.1", 1)
	other := record("cert-manager", "1.15.0", 1)
	good, err := SignVersion(signedRec, k.team)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := SignVersion(wrongKey, k.stranger)
	b := index.NewBuilder()
	b.Add("a", signedRec, []index.Signature{good})
	b.Add("b", unsigned, nil)
	b.Add("c", wrongKey, []index.Signature{bad})
	b.Add("d", other, nil)
	x, _ := b.Index(testTime)
	x.Expires = now.Add(time.Hour)
	data, sig := signed(t, x, k.index)
	r1 := rootFile(t, 1, RootConfig{Expires: now.Add(time.Hour), RootKeys: pubs(k.rootA), RootThreshold: 1, IndexKeys: pubs(k.index), IndexThreshold: 1,
		Delegations: []DelegationConfig{{Name: "team-virt", Packages: []string{"kubevirt*", "cdi"}, Keys: pubs(k.team), Threshold: 1}}}, k.rootA)
	v, err := Verify(data, sig, &Trust{RootKeys: pubs(k.rootA), Roots: [][]byte{r1}, Latest: r1}, VerifyOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if v.Packages != 2 || v.Versions != 2 {
		t.Fatalf("kept %d packages, %d versions; want kubevirt 1.9.0 and cert-manager", v.Packages, v.Versions)
	}
	if vs := v.Index.Packages["kubevirt"].Versions; len(vs) != 1 || vs[0].Version != "1.9.0" {
		t.Fatalf("kubevirt versions kept: %+v", vs)
	}
	want := []string{
		"kubevirt 1.9.1 build 1 dropped: delegation team-virt needs 1 signature(s) of the version by its keys",
		"cdi 1.66.1 build 1 dropped: delegation team-virt needs 1 signature(s)",
	}
	all := strings.Join(v.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	// A signature over another digest does not count either.
	replay := *signedRec
	replay.Spec.Build = 5
	b2 := index.NewBuilder()
	b2.Add("e", &replay, []index.Signature{good})
	x2, _ := b2.Index(testTime)
	x2.Expires = now.Add(time.Hour)
	data2, sig2 := signed(t, x2, k.index)
	v2, err := Verify(data2, sig2, &Trust{RootKeys: pubs(k.rootA), Roots: [][]byte{r1}, Latest: r1}, VerifyOptions{Now: now})
	if err != nil || v2.Versions != 0 || len(v2.Warnings) != 1 {
		t.Fatalf("a version signature replayed onto another build: %v %+v", err, v2)
	}
}

// TestVerifySignatureFirst: the signature file is checked before any byte
// of the index is parsed — a junk index (which would fail to parse, or take
// long to) is refused for its signature, cheapest check first.
func TestVerifySignatureFirst(t *testing.T) {
	k := newTestKeys(t)
	junk := []byte("entries: [" + strings.Repeat("{", 10000))
	trust := &Trust{IndexKeys: pubs(k.index)}
	now := time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		sig  []byte
		want string
	}{
		{"missing", nil, "index.yaml.sig is missing or empty"},
		{"malformed", []byte("signatures: [{keyid: zz, sig: nope}]\n"), "index.yaml.sig is malformed"},
		// With plain index keys kubepkg tries every signature against
		// every key, whatever keyid it names: refused over the bytes,
		// still before the index is parsed.
		{"foreign key id", sigList(t, junk, k.stranger, k.team), "0 valid signature(s) by the 1 trusted key(s)"},
		{"not over these bytes", sigFile(t, []byte("other bytes"), k.index), "0 valid signature(s) by the 1 trusted key(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(junk, tc.sig, trust, VerifyOptions{Now: now})
			if !errors.Is(err, ErrNotSigned) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify(junk index, %s signature) = %v, want ErrNotSigned containing %q", tc.name, err, tc.want)
			}
		})
	}
}

// sigList signs data with keys into the list form, which names key ids.
func sigList(t testing.TB, data []byte, keys ...*PrivateKey) []byte {
	t.Helper()
	b, err := index.MarshalSignatureList(signAll(t, data, keys))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerifyKeptIndexSize: an index to be kept in memory (a merge base) over
// MaxKeptIndexSize is refused before its signature is even read; with
// DiscardIndex the same bytes are verified.
func TestVerifyKeptIndexSize(t *testing.T) {
	k := newTestKeys(t)
	x := &index.RepositoryIndex{APIVersion: index.IndexAPIVersion, Kind: index.IndexKind, Generated: time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC), Packages: map[string]*index.IndexPackage{}}
	data, sig := signed(t, x, k.index)
	defer func(n int) { maxKept = n }(maxKept)
	maxKept = len(data) - 1
	trust := &Trust{IndexKeys: pubs(k.index)}
	now := time.Date(2026, 10, 11, 12, 0, 0, 0, time.UTC)
	if _, err := Verify(data, nil, trust, VerifyOptions{Now: now}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Verify(kept index over the limit) = %v, want ErrTooLarge", err)
	}
	if _, err := Verify(data, sig, trust, VerifyOptions{Now: now, DiscardIndex: true}); err != nil {
		t.Fatalf("Verify(DiscardIndex) = %v, want it verified", err)
	}
}
