package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"math/rand"
	"strings"
	"testing"
	"time"
)

func TestKeys(t *testing.T) {
	k, err := GenerateKey(rand.New(rand.NewSource(7)))
	if err != nil {
		t.Fatal(err)
	}
	privPEM, err := k.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(privPEM, []byte("-----BEGIN PRIVATE KEY-----\n")) {
		t.Fatalf("private key PEM: %s", privPEM)
	}
	pubPEM := k.Public().PEM()
	if !bytes.HasPrefix(pubPEM, []byte("-----BEGIN PUBLIC KEY-----\n")) {
		t.Fatalf("public key PEM: %s", pubPEM)
	}
	// keyid = hex sha256 of the PKIX DER.
	block, _ := pem.Decode(pubPEM)
	sum := sha256.Sum256(block.Bytes)
	if k.KeyID() != hex.EncodeToString(sum[:]) {
		t.Fatalf("keyid %s is not the sha256 of the PKIX DER", k.KeyID())
	}
	k2, err := ParsePrivateKey(privPEM)
	if err != nil || k2.KeyID() != k.KeyID() {
		t.Fatalf("ParsePrivateKey: %v", err)
	}
	p2, err := ParsePublicKey(pubPEM)
	if err != nil || p2.KeyID() != k.KeyID() {
		t.Fatalf("ParsePublicKey: %v", err)
	}
	sig, _ := k.Sign([]byte("msg"))
	if !p2.Verify([]byte("msg"), sig) || p2.Verify([]byte("msh"), sig) || p2.Verify([]byte("msg"), sig[:10]) {
		t.Fatal("Verify")
	}
	// The private key never prints.
	secret := base64.StdEncoding.EncodeToString(k.key.Seed())
	der, _ := x509.MarshalPKCS8PrivateKey(k.key)
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		out := fmt.Sprintf(format, k)
		if strings.Contains(out, secret) || strings.Contains(out, hex.EncodeToString(k.key.Seed())) || strings.Contains(out, base64.StdEncoding.EncodeToString(der)) || !strings.Contains(out, k.KeyID()) {
			t.Errorf("fmt %s of a private key = %q", format, out)
		}
	}

	rsaKey, _ := rsa.GenerateKey(rand.New(rand.NewSource(1)), 1024)
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	rsaPub, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	for _, tc := range []struct {
		name string
		in   []byte
		pub  bool
		want string
	}{
		{"not PEM", []byte("hello"), false, "no PEM \"PRIVATE KEY\" block"},
		{"public as private", pubPEM, false, `PEM block is "PUBLIC KEY", want "PRIVATE KEY"`},
		{"private as public", privPEM, true, `PEM block is "PRIVATE KEY", want "PUBLIC KEY"`},
		{"rsa private", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rsaDER}), false, "want ed25519"},
		{"rsa public", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: rsaPub}), true, "want ed25519"},
		{"trailing data", append(append([]byte{}, privPEM...), "junk"...), false, "data after the PEM"},
	} {
		var err error
		if tc.pub {
			_, err = ParsePublicKey(tc.in)
		} else {
			_, err = ParsePrivateKey(tc.in)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if notOurs := tc.name == "not PEM" || strings.HasPrefix(tc.name, "rsa "); notOurs != errors.Is(err, ErrKeyFormat) {
			t.Errorf("%s: %v; errors.Is(ErrKeyFormat) = %v, want %v", tc.name, err, !notOurs, notOurs)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error quotes the key", tc.name)
		}
	}
}

func TestSignatureFile(t *testing.T) {
	k := newTestKeys(t)
	msg := []byte("index bytes\n")
	one := sigFile(t, msg, k.index)
	if !bytes.HasSuffix(one, []byte("\n")) || bytes.Count(one, []byte("\n")) != 1 {
		t.Fatalf("one-key form is base64 and a newline: %q", one)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(one)))
	if err != nil || len(raw) != ed25519.SignatureSize || !ed25519.Verify(k.index.Public().Key(), msg, raw) {
		t.Fatalf("one-key form is not the base64 of the signature")
	}
	two := sigFile(t, msg, k.index, k.index2)
	if !bytes.HasPrefix(two, []byte("signatures:\n- keyid: ")) {
		t.Fatalf("several-keys form: %s", two)
	}
	for name, b := range map[string][]byte{"one": one, "two": two} {
		sigs, err := index.ParseSignatures(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := checkSignatures(msg, sigs, []Verifier{k.index.Public(), k.index2.Public(), k.stranger.Public()})
		if want := map[string]int{"one": 1, "two": 2}[name]; len(got) != want {
			t.Errorf("%s: %d valid signatures, want %d", name, len(got), want)
		}
	}
	// A key's signature counts once, however often it appears.
	dup := []index.Signature{{KeyID: k.index.KeyID(), Sig: strings.TrimSpace(string(one))}, {KeyID: k.index.KeyID(), Sig: strings.TrimSpace(string(one))}, {Sig: strings.TrimSpace(string(one))}}
	if got := checkSignatures(msg, dup, []Verifier{k.index.Public()}); len(got) != 1 {
		t.Errorf("duplicate signatures counted %d times", len(got))
	}
	for _, bad := range []string{"", "not base64!\n", base64.StdEncoding.EncodeToString([]byte("short")) + "\n", "signatures: []\n", "signatures:\n- keyid: abc\n  sig: x\n", "signatures:\n- keyid: " + strings.Repeat("a", 64) + "\n  sig: x\n  extra: 1\n", strings.Repeat("A", index.MaxSignaturesSize+1)} {
		if _, err := index.ParseSignatures([]byte(bad)); err == nil {
			t.Errorf("ParseSignatures(%.40q) accepted", bad)
		}
	}
}

func TestRootCanonicalForm(t *testing.T) {
	k := newTestKeys(t)
	r, err := NewRoot(RootConfig{
		Expires: time.Date(2027, 10, 6, 2, 38, 19, 0, time.UTC), RootKeys: pubs(k.rootB, k.rootA), RootThreshold: 2, IndexKeys: pubs(k.index), IndexThreshold: 1,
		Delegations: []DelegationConfig{{Name: "team-virt", Packages: []string{"kubevirt*", "cdi"}, Keys: pubs(k.team), Threshold: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`{"version":1,"expires":"2027-10-06T02:38:19Z","keys":{"`,
		`"roles":{"index":{"keyids":["` + k.index.KeyID() + `"],"threshold":1},"root":{"keyids":[`,
		`"delegations":[{"name":"team-virt","packages":["kubevirt*","cdi"],"keyids":["` + k.team.KeyID() + `"],"threshold":1}]}`,
		`"` + k.rootA.KeyID() + `":"-----BEGIN PUBLIC KEY-----\n`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("signed bytes lack %s:\n%s", want, s)
		}
	}
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil || len(generic) != 5 {
		t.Fatalf("signed bytes are not the five fields: %v", err)
	}
	if ids := r.Signed.Roles[RoleRoot].KeyIDs; ids[0] > ids[1] {
		t.Errorf("keyids are not sorted: %v", ids)
	}
	// Round trip through the file keeps the signed bytes.
	r.Sign(k.rootA)
	out, _ := r.Marshal()
	r2, err := ParseRoot(out)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := r2.SignedBytes()
	if !bytes.Equal(b, b2) {
		t.Fatal("signed bytes changed by a round trip")
	}
	if ids, need, _ := r2.SignedBy(RoleRoot); len(ids) != 1 || need != 2 {
		t.Errorf("SignedBy = %v, %d", ids, need)
	}

	// A key must be stored under its own keyid.
	wrong := strings.Replace(string(out), k.team.KeyID()+":", k.stranger.KeyID()+":", 1)
	wrong = strings.ReplaceAll(wrong, "- "+k.team.KeyID(), "- "+k.stranger.KeyID())
	if _, err := ParseRoot([]byte(wrong)); err == nil || !strings.Contains(err.Error(), "a key must be stored under its own keyid") {
		t.Errorf("a key under another keyid: %v", err)
	}
	for _, tc := range []struct {
		c    RootConfig
		want string
	}{
		{RootConfig{Expires: testTime, RootKeys: pubs(k.rootA), RootThreshold: 2, IndexKeys: pubs(k.index), IndexThreshold: 1}, "root role threshold is 2 with 1 keys"},
		{RootConfig{Expires: testTime, RootKeys: pubs(k.rootA), RootThreshold: 1, IndexThreshold: 1}, "index role needs at least one key"},
		{RootConfig{RootKeys: pubs(k.rootA), RootThreshold: 1, IndexKeys: pubs(k.index), IndexThreshold: 1}, "root needs an expiry"},
		{RootConfig{Expires: testTime, RootKeys: pubs(k.rootA), RootThreshold: 1, IndexKeys: pubs(k.index), IndexThreshold: 1,
			Delegations: []DelegationConfig{{Name: "t", Packages: []string{"[x"}, Keys: pubs(k.team), Threshold: 1}}}, "not a valid glob"},
	} {
		if _, err := NewRoot(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewRoot = %v, want %q", err, tc.want)
		}
	}
	// Next keeps the content and raises the version.
	c, _ := r.Config()
	c.IndexKeys = pubs(k.index2)
	next, err := r.Next(c)
	if err != nil || next.Signed.Version != 2 || next.Signed.Roles[RoleIndex].KeyIDs[0] != k.index2.KeyID() || len(next.Signed.Delegations) != 1 || len(next.Signatures) != 0 {
		t.Fatalf("Next = %+v, %v", next, err)
	}
	if d := next.DelegationFor("kubevirt-manager"); d == nil || d.Name != "team-virt" {
		t.Errorf("DelegationFor(kubevirt-manager) = %v", d)
	}
	if d := next.DelegationFor("cdi-extra"); d != nil {
		t.Errorf("DelegationFor(cdi-extra) = %v", d)
	}
}

func TestSemverOrder(t *testing.T) {
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	for i := 1; i < len(order); i++ {
		a, err1 := spec.ParseSemver(order[i-1])
		b, err2 := spec.ParseSemver(order[i])
		if err1 != nil || err2 != nil || a.Compare(b) >= 0 || b.Compare(a) <= 0 {
			t.Errorf("%s < %s: %v %v", order[i-1], order[i], err1, err2)
		}
	}
	for _, bad := range []string{"v1.0.0", "1.0", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.0+", "1..0", "1.0.0-a_b"} {
		if _, err := spec.ParseSemver(bad); err == nil {
			t.Errorf("parseSemver(%q) accepted", bad)
		}
	}
	a, _ := spec.ParseSemver("1.0.0+build.1")
	b, _ := spec.ParseSemver("1.0.0+build.2")
	if a.Compare(b) != 0 {
		t.Error("build metadata must not affect precedence")
	}
}
