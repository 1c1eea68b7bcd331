package sigbundle

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"kbuild.dev/kbuild/trust"
)

const digest = "sha256:" + "ab0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"

func key(t *testing.T) *trust.PrivateKey {
	t.Helper()
	k, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signed(t *testing.T, k *trust.PrivateKey, predicateType string, predicate json.RawMessage) []byte {
	t.Helper()
	s, err := NewStatement("registry.example/charts/app", digest, predicateType, predicate)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Sign(s, k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignOpen(t *testing.T) {
	k, stranger := key(t), key(t)
	good := signed(t, k, CycloneDXPredicate, json.RawMessage(`{"bomFormat": "CycloneDX"}`))
	tamper := func(f func(b *bundle)) []byte {
		var b bundle
		if err := json.Unmarshal(good, &b); err != nil {
			t.Fatal(err)
		}
		f(&b)
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	other := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		name   string
		data   []byte
		digest string
		keys   []trust.Verifier
		want   string // "" for success, else part of the error
	}{
		{"signed by the key", good, digest, []trust.Verifier{k.Public()}, ""},
		{"one of several keys", good, digest, []trust.Verifier{stranger.Public(), k.Public()}, ""},
		{"wrong key", good, digest, []trust.Verifier{stranger.Public()}, "signed by none of the 1 trusted keys"},
		{"another manifest", good, other, []trust.Verifier{k.Public()}, "is about " + digest + ", not " + other},
		{"payload changed", tamper(func(b *bundle) {
			p, _ := base64.StdEncoding.DecodeString(b.DSSEEnvelope.Payload)
			p = bytes.Replace(p, []byte("CycloneDX"), []byte("CycloneDx"), 1)
			b.DSSEEnvelope.Payload = base64.StdEncoding.EncodeToString(p)
		}), digest, []trust.Verifier{k.Public()}, "signed by none"},
		{"two signatures", tamper(func(b *bundle) {
			b.DSSEEnvelope.Signatures = append(b.DSSEEnvelope.Signatures, b.DSSEEnvelope.Signatures[0])
		}), digest, []trust.Verifier{k.Public()}, "with one signature"},
		{"old media type", tamper(func(b *bundle) {
			b.MediaType = "application/vnd.dev.sigstore.bundle+json;version=0.2"
		}), digest, []trust.Verifier{k.Public()}, "mediaType is"},
		{"not JSON", []byte("{"), digest, []trust.Verifier{k.Public()}, "not a valid Sigstore bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, by, err := Open(tt.data, tt.digest, tt.keys)
			if tt.want != "" {
				if err == nil || !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Open: err = %v, want ErrBundle with %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if by != k.KeyID() || s.PredicateType != CycloneDXPredicate || string(s.Predicate) != `{"bomFormat":"CycloneDX"}` {
				t.Fatalf("Open = %+v by %s", s, by)
			}
		})
	}
}

// TestBundleShape pins what cosign and sigstore-go read: the v0.3 media
// type, a public-key hint, a DSSE envelope of an in-toto v1 statement with
// one signature, the subject's sha256 without its prefix, and bytes that
// do not change from one signing to the next.
func TestBundleShape(t *testing.T) {
	k := key(t)
	data := signed(t, k, SignPredicate, nil)
	if again := signed(t, k, SignPredicate, nil); !bytes.Equal(data, again) {
		t.Fatal("two signings of one statement differ")
	}
	var b map[string]any
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	if b["mediaType"] != MediaType {
		t.Errorf("mediaType = %v", b["mediaType"])
	}
	if h := b["verificationMaterial"].(map[string]any)["publicKey"].(map[string]any)["hint"]; h != k.KeyID() {
		t.Errorf("hint = %v, want %s", h, k.KeyID())
	}
	env := b["dsseEnvelope"].(map[string]any)
	if env["payloadType"] != "application/vnd.in-toto+json" || len(env["signatures"].([]any)) != 1 {
		t.Errorf("envelope = %v", env)
	}
	// cosign's DSSE verifier skips a signature whose keyid is not the
	// key's SSH fingerprint: none is written.
	if _, ok := env["signatures"].([]any)[0].(map[string]any)["keyid"]; ok {
		t.Errorf("the DSSE signature names a keyid: %v", env["signatures"])
	}
	payload, _ := base64.StdEncoding.DecodeString(env["payload"].(string))
	want := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"registry.example/charts/app","digest":{"sha256":"` +
		strings.TrimPrefix(digest, "sha256:") + `"}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}}`
	if string(payload) != want {
		t.Errorf("statement =\n%s\nwant\n%s", payload, want)
	}
}

func TestNewStatementRefuses(t *testing.T) {
	for _, tt := range []struct{ digest, predicate, want string }{
		{"sha512:00", "{}", "is not sha256:<64 hex>"},
		{"sha256:" + strings.Repeat("g", 64), "{}", "is not sha256:<64 hex>"},
		{digest, "{", "is not JSON"},
	} {
		if _, err := NewStatement("r/a", tt.digest, SignPredicate, json.RawMessage(tt.predicate)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewStatement(%q, %q): err = %v, want %q", tt.digest, tt.predicate, err, tt.want)
		}
	}
}
