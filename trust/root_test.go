package trust

import (
	"bytes"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"
)

// TestRootMarshalDeterministic: the same root is written as the same bytes
// every time, its mappings' keys in byte order, for keyids on which
// sigs.k8s.io/yaml's key order varies from run to run ("5e83…", "53fe…",
// "9d6b…"), and what is written parses back to the same root.
func TestRootMarshalDeterministic(t *testing.T) {
	ids := []string{
		"5e836fa702be268b7aca6c35054119e11d2facd4f8886502e55c7ce199b47cb6",
		"9d6be2f7a231b22b75da272317dddfde976576b635cf81fd395ae1b004ec141f",
		"53fe231927919f8bfcde13e4dc1b5c3c72e8ba125f4356eb186863d6276f1c68",
	}
	r := &Root{Signed: RootSigned{Version: 1, Expires: time.Unix(1807000000, 0).UTC(), Keys: map[string]string{}, Roles: map[string]Role{
		RoleRoot: {KeyIDs: []string{ids[2], ids[1]}, Threshold: 2}, RoleIndex: {KeyIDs: []string{ids[0]}, Threshold: 1}}}}
	for _, id := range ids {
		r.Signed.Keys[id] = "-----BEGIN PUBLIC KEY-----\n" + id[:8] + "\n-----END PUBLIC KEY-----\n"
	}
	first, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		b, err := r.Marshal()
		if err != nil || !bytes.Equal(b, first) {
			t.Fatalf("Marshal #%d = %v, differs from the first:\n%s\n---\n%s", i, err, first, b)
		}
	}
	text := string(first)
	if a, b, c := strings.Index(text, "    53fe"), strings.Index(text, "    5e83"), strings.Index(text, "    9d6b"); a < 0 || !(a < b && b < c) {
		t.Errorf("keys not in byte order:\n%s", text)
	}
	var back Root
	if err := sigsyaml.Unmarshal(first, &back); err != nil {
		t.Fatal(err)
	}
	d1, _ := r.Digest()
	d2, _ := back.Digest()
	if d1 != d2 {
		t.Errorf("the written root reads back as another root: %s, want %s", d2, d1)
	}
}
