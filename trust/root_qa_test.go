package trust

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"
)

// kubepkgRoot is the shape kubepkg's reader decodes a root into
// (pkg/repo/trust.go): it verifies signatures over json.Marshal of it.
type kubepkgRoot struct {
	Signed struct {
		Version int               `json:"version"`
		Expires time.Time         `json:"expires"`
		Keys    map[string]string `json:"keys"`
		Roles   map[string]Role   `json:"roles"`
	} `json:"signed"`
}

func TestRootQARole(t *testing.T) {
	k := newTestKeys(t)
	c := RootConfig{Expires: testTime, RootKeys: pubs(k.rootA), RootThreshold: 1, IndexKeys: pubs(k.index), IndexThreshold: 1,
		QAKeys: pubs(k.team, k.stranger), QAThreshold: 2}
	r, err := NewRoot(c)
	if err != nil {
		t.Fatal(err)
	}
	if qa := r.Signed.Roles[RoleQA]; qa.Threshold != 2 || len(qa.KeyIDs) != 2 {
		t.Fatalf("qa role = %+v", qa)
	}
	r.Sign(k.rootA)
	out, _ := r.Marshal()
	r2, err := ParseRoot(out)
	if err != nil {
		t.Fatal(err)
	}
	keys, need, ok := r2.RoleKeys(RoleQA)
	if !ok || need != 2 || len(keys) != 2 {
		t.Fatalf("RoleKeys(qa) = %d keys, threshold %d, %v", len(keys), need, ok)
	}
	// Next keeps the role unless changed.
	c2, err := r2.Config()
	if err != nil {
		t.Fatal(err)
	}
	next, err := r2.Next(c2)
	if err != nil || next.Signed.Roles[RoleQA].Threshold != 2 {
		t.Fatalf("Next lost the qa role: %+v, %v", next.Signed.Roles, err)
	}
	// kubepkg's reader covers the same bytes, the qa role included, so a
	// root with it still verifies there.
	var kr kubepkgRoot
	if err := sigsyaml.Unmarshal(out, &kr); err != nil {
		t.Fatal(err)
	}
	theirs, _ := json.Marshal(kr.Signed)
	ours, _ := r2.SignedBytes()
	if !bytes.Equal(theirs, ours) {
		t.Fatalf("kubepkg's canonical form differs:\n%s\n%s", theirs, ours)
	}
	if !strings.Contains(string(ours), `"qa":{"keyids":[`) {
		t.Errorf("signed bytes lack the qa role: %s", ours)
	}

	for _, tc := range []struct {
		c    RootConfig
		want string
	}{
		{RootConfig{Expires: testTime, RootKeys: pubs(k.rootA), RootThreshold: 1, IndexKeys: pubs(k.index), IndexThreshold: 1, QAKeys: pubs(k.team), QAThreshold: 2}, "qa role threshold is 2 with 1 keys"},
		{RootConfig{Expires: testTime, RootKeys: pubs(k.rootA), RootThreshold: 1, IndexKeys: pubs(k.index), IndexThreshold: 1, QAThreshold: 1}, "qa role needs at least one key"},
	} {
		if _, err := NewRoot(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewRoot = %v, want %q", err, tc.want)
		}
	}
	bad := strings.Replace(string(out), "  roles:\n", "  roles:\n    ops:\n      keyids: []\n      threshold: 1\n", 1)
	if _, err := ParseRoot([]byte(bad)); err == nil || !strings.Contains(err.Error(), `unknown role "ops"`) {
		t.Errorf("ParseRoot with role ops = %v", err)
	}
}

// TestRootWithoutQA reads a root written before the qa role existed: it
// parses, its signature still verifies, and it has no qa keys.
func TestRootWithoutQA(t *testing.T) {
	b, err := os.ReadFile("testdata/root-without-qa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRoot(b)
	if err != nil {
		t.Fatal(err)
	}
	if ids, need, _ := r.SignedBy(RoleRoot); len(ids) != 1 || need != 1 {
		t.Fatalf("root signature no longer verifies: %v of %d", ids, need)
	}
	if _, _, ok := r.RoleKeys(RoleQA); ok {
		t.Fatal("a root without a qa role has qa keys")
	}
	c, err := r.Config()
	if err != nil || len(c.QAKeys) != 0 {
		t.Fatalf("Config = %+v, %v", c, err)
	}
	next, err := r.Next(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := next.Signed.Roles[RoleQA]; ok {
		t.Fatal("Next added a qa role")
	}
}
