package trust

import (
	"strings"
	"testing"
)

func TestPAE(t *testing.T) {
	// The example of the DSSE protocol specification.
	got := string(PAE("http://example.com/HelloWorld", []byte("hello world")))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; got != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
}

func TestOpenEnvelope(t *testing.T) {
	k, _ := GenerateKey(nil)
	other, _ := GenerateKey(nil)
	env, err := SignEnvelope("application/vnd.in-toto+json", []byte(`{"a":1}`), k)
	if err != nil {
		t.Fatal(err)
	}
	payload, by, err := OpenEnvelope(env, "application/vnd.in-toto+json", []Verifier{k.Public(), other.Public()})
	if err != nil || string(payload) != `{"a":1}` || len(by) != 1 || by[0] != k.KeyID() {
		t.Fatalf("OpenEnvelope = %q, %v, %v", payload, by, err)
	}
	for _, tc := range []struct {
		name, data, typ, want string
	}{
		{"other payload type", string(env), "text/plain", `payloadType is "application/vnd.in-toto+json", want "text/plain"`},
		{"unknown field", `{"payloadType":"x","payload":"","signatures":[],"extra":1}`, "x", "unknown field"},
		{"trailing data", string(env) + "{}", "application/vnd.in-toto+json", "data after the JSON object"},
		{"too large", strings.Repeat(" ", MaxEnvelopeSize+1), "x", "more than the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := OpenEnvelope([]byte(tc.data), tc.typ, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("OpenEnvelope = %v, want %q", err, tc.want)
			}
		})
	}
}
