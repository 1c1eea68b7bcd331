package evidence

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/stacktest"
	"kbuild.dev/kbuild/trust"
)

var issued = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

type keys struct {
	root, idx, qa1, qa2, stranger *trust.PrivateKey
}

func newKeys(t *testing.T) keys {
	var k keys
	for _, p := range []**trust.PrivateKey{&k.root, &k.idx, &k.qa1, &k.qa2, &k.stranger} {
		var err error
		if *p, err = trust.GenerateKey(nil); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

func (k keys) rootWith(t *testing.T, threshold int, qa ...*trust.PrivateKey) *trust.Root {
	t.Helper()
	c := trust.RootConfig{Expires: issued.AddDate(1, 0, 0), RootKeys: []*trust.PublicKey{k.root.Public()}, RootThreshold: 1,
		IndexKeys: []*trust.PublicKey{k.idx.Public()}, IndexThreshold: 1, QAThreshold: threshold}
	for _, q := range qa {
		c.QAKeys = append(c.QAKeys, q.Public())
	}
	r, err := trust.NewRoot(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func attest(t *testing.T, x *index.RepositoryIndex, target Target, result string, signers ...trust.Signer) []byte {
	t.Helper()
	subjects, err := Subjects(x, target)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Attestation{Target: target, Result: result, Env: map[string]string{"kubernetes": "1.33.2", "arch": "amd64", "runtime": "containerd"},
		Log: "https://ci.example/runs/7", Issued: issued, Expires: issued.AddDate(0, 3, 0)}, subjects)
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(s, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// resign changes the statement of env and signs it again with signer.
func resign(t *testing.T, env []byte, change func(*Statement), signer trust.Signer) []byte {
	t.Helper()
	var e trust.Envelope
	json.Unmarshal(env, &e)
	payload, _ := base64.StdEncoding.DecodeString(e.Payload)
	var s Statement
	if err := json.Unmarshal(payload, &s); err != nil {
		t.Fatal(err)
	}
	change(&s)
	out, err := Sign(&s, signer)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAttestVerify(t *testing.T) {
	k := newKeys(t)
	x := stacktest.Index(t)
	root := k.rootWith(t, 1, k.qa1, k.qa2)
	foreman := Target{Package: "foreman", Version: "3.15.0", Build: 1}
	env := attest(t, x, foreman, Pass, k.qa1)
	v, err := Verify(env, root, x, issued.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if v.Target != foreman || v.Result != Pass || EnvString(v.Env) != "arch=amd64,kubernetes=1.33,runtime=containerd" || len(v.SignedBy) != 1 {
		t.Fatalf("Verify = %+v", v)
	}
	var names []string
	for _, s := range v.Statement.Subject {
		names = append(names, s.Name+"@sha256:"+s.Digest["sha256"][:8])
	}
	if want := "oci://registry.example/foreman/foreman:3.15.0-1@sha256:"; !strings.Contains(strings.Join(names, " "), want) ||
		!strings.Contains(strings.Join(names, " "), "quay.io/foreman/foreman:nightly@sha256:9c77128c") ||
		!strings.Contains(strings.Join(names, " "), "pkg:kubepkg/foreman@3.15.0?build=1@sha256:") || len(names) != 3 {
		t.Fatalf("subjects = %v", names)
	}
	if again := attest(t, x, foreman, Pass, k.qa1); string(again) != string(env) {
		t.Fatal("evidence is not reproducible")
	}
	// A fail result is evidence too; policies count it as a failure.
	if v, err := Verify(attest(t, x, foreman, Fail, k.qa1), root, x, issued); err != nil || v.Result != Fail {
		t.Fatalf("fail evidence: %+v, %v", v, err)
	}
	// Evidence for a release set covers every member's digests.
	set := attest(t, x, Target{Package: "foreman-stack", Version: "3.15.0", Build: 1}, Pass, k.qa1)
	v, err = Verify(set, root, x, issued)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(v.Statement.Subject); n != 1+4*3 {
		t.Fatalf("a set of four members has %d subjects, want 13", n)
	}
}

func TestVerifyRefuses(t *testing.T) {
	k := newKeys(t)
	x := stacktest.Index(t)
	root := k.rootWith(t, 1, k.qa1, k.qa2)
	foreman := Target{Package: "foreman", Version: "3.15.0", Build: 1}
	good := attest(t, x, foreman, Pass, k.qa1)
	// The same version with another chart digest: evidence for other digests.
	other := stacktest.Index(t, "foreman-3.15.0-1")
	other.Packages["foreman"].Versions[0].Spec.Variants[0].Components[0].Chart.Digest = "sha256:" + strings.Repeat("ab", 32)
	otherDigest := attest(t, other, foreman, Pass, k.qa1)
	revoked := k.rootWith(t, 1, k.qa2)
	var e trust.Envelope
	json.Unmarshal(good, &e)
	payload, _ := base64.StdEncoding.DecodeString(e.Payload)
	e.Payload = base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"result":"pass"`, `"result":"fail"`, 1)))
	tampered, _ := json.Marshal(e)
	for _, tc := range []struct {
		name string
		env  []byte
		root *trust.Root
		now  time.Time
		want string
	}{
		{"signed by the index key", attest(t, x, foreman, Pass, k.idx), root, issued,
			"signed by 0 of the qa role's keys in root version 1, which needs 1; signatures by keys outside the role (or invalid): " + k.idx.KeyID()[:12]},
		{"signed by a stranger", attest(t, x, foreman, Pass, k.stranger), root, issued, "signatures by keys outside the role (or invalid): " + k.stranger.KeyID()[:12]},
		{"below the threshold", good, k.rootWith(t, 2, k.qa1, k.qa2), issued, "signed by 1 of the qa role's keys in root version 1, which needs 2"},
		{"revoked: the key left the qa role", good, revoked, issued, "signed by 0 of the qa role's keys"},
		{"root without a qa role", good, k.rootWith(t, 0), issued, "root version 1 has no qa role, so no key may sign test evidence"},
		{"expired", good, root, issued.AddDate(0, 4, 0), "the evidence for foreman 3.15.0 build 1 on arch=amd64,kubernetes=1.33,runtime=containerd expired on 2027-02-02T00:00:00Z; run the tests again"},
		{"evidence for other digests", otherDigest, root, issued,
			"subject oci://registry.example/foreman/foreman:3.15.0-1: the evidence has sha256:abab"},
		{"evidence for another build", resign(t, good, func(s *Statement) { s.Predicate.Configuration[1].Annotations["build"] = "2" }, k.qa1), root, issued,
			"the evidence for foreman 3.15.0 build 2 is not about what the index pins: subject oci://registry.example/foreman/foreman:3.15.0-1 (sha256:"},
		{"a subject missing", resign(t, good, func(s *Statement) { s.Subject = s.Subject[1:] }, k.qa1), root, issued, "the evidence lacks subject"},
		{"not in the index", resign(t, good, func(s *Statement) { s.Predicate.Configuration[1].Annotations["version"] = "9.9.9" }, k.qa1), root, issued,
			"foreman 9.9.9 build 1 is not in the index"},
		{"changed after signing", tampered, root, issued, "signed by 0 of the qa role's keys"},
		{"other predicate", resign(t, good, func(s *Statement) { s.PredicateType = "https://slsa.dev/provenance/v1" }, k.qa1), root, issued,
			`predicate "https://slsa.dev/provenance/v1"`},
		{"no root", good, nil, issued, "verified against a root of trust with a qa role"},
		{"pass that lists failed tests", resign(t, good, func(s *Statement) { s.Predicate.FailedTests = []string{"install"} }, k.qa1), root, issued,
			`says result pass but lists failedTests "install"`},
		{"issued in 2099", resign(t, good, func(s *Statement) {
			s.Predicate.Configuration[1].Annotations["issued"] = "2099-01-01T00:00:00Z"
			s.Predicate.Configuration[1].Annotations["expires"] = "2099-06-01T00:00:00Z"
		}, k.qa1), root, issued, "was issued on 2099-01-01T00:00:00Z, in the future"},
		{"issued beyond the clock skew", resign(t, good, func(s *Statement) {
			s.Predicate.Configuration[1].Annotations["issued"] = issued.Add(6 * time.Minute).Format(time.RFC3339)
		}, k.qa1), root, issued, "in the future"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.env, tc.root, x, tc.now)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v\nwant %q", err, tc.want)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	x := stacktest.Index(t)
	subjects, _ := Subjects(x, Target{Package: "foreman", Version: "3.15.0", Build: 1})
	ok := Attestation{Target: Target{Package: "foreman", Version: "3.15.0", Build: 1}, Result: Pass, Env: map[string]string{"kubernetes": "1.33", "arch": "arm64"}, Issued: issued, Expires: issued.Add(time.Hour)}
	for _, tc := range []struct {
		name   string
		change func(*Attestation)
		want   string
	}{
		{"bad result", func(a *Attestation) { a.Result = "ok" }, `result "ok": want pass or fail`},
		{"no kubernetes", func(a *Attestation) { a.Env = map[string]string{"arch": "amd64"} }, "the environment needs kubernetes=MAJOR.MINOR"},
		{"no arch", func(a *Attestation) { a.Env = map[string]string{"kubernetes": "1.33"} }, "the environment needs arch"},
		{"unknown arch", func(a *Attestation) { a.Env["arch"] = "x86" }, `arch="x86": want one of amd64, arm64`},
		{"bad kubernetes", func(a *Attestation) { a.Env["kubernetes"] = "latest" }, `kubernetes="latest": want MAJOR.MINOR`},
		{"no expiry", func(a *Attestation) { a.Expires = a.Issued }, "evidence must expire after it is issued"},
		{"log not a URL", func(a *Attestation) { a.Log = "file:///etc/passwd" }, "want the http(s) URL of the test run"},
		{"pass with failures", func(a *Attestation) { a.Failed = []string{"upgrade"} }, "a pass result lists 1 failed tests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := ok
			a.Env = map[string]string{"kubernetes": "1.33", "arch": "arm64"}
			tc.change(&a)
			if _, err := New(a, subjects); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ in, want string }{
		{"kubernetes=1.33,arch=amd64,runtime=containerd", ""},
		{"kubernetes=1.33,arch", `"arch" is not KEY=VALUE`},
		{"kubernetes=1.33,kubernetes=1.34,arch=amd64", "kubernetes given twice"},
		{"kubernetes=1.33,arch=amd64,Runtime=x", `environment key "Runtime"`},
		{"kubernetes=1.33,arch=amd64,runtime=a b", `environment runtime="a b"`},
	} {
		_, err := ParseEnv(tc.in)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseEnv(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	unpinned := stacktest.Index(t, "foreman-3.15.0-1")
	unpinned.Packages["foreman"].Versions[0].Spec.Images = []string{"quay.io/foreman/foreman:nightly"}
	if _, err := Subjects(unpinned, Target{Package: "foreman", Version: "3.15.0", Build: 1}); err == nil || !strings.Contains(err.Error(), "image quay.io/foreman/foreman:nightly is not pinned by digest") {
		t.Errorf("Subjects of an unpinned image = %v", err)
	}
	if _, err := Subjects(x, Target{Package: "foreman-stack", Version: "3.15.0", Build: 3}); err == nil || !strings.Contains(err.Error(), "member candlepin 4.6.0 build 9 is not in the index") {
		t.Errorf("Subjects of a set with a missing member = %v", err)
	}
}
