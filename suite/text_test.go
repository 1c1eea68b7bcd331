package suite

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/trust"
)

// TestWithdrawResultText: per suite, the tombstone or that the suite does
// not hold the build, what followers do, the index signed (keyid), and
// the root copy last.
func TestWithdrawResultText(t *testing.T) {
	k, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wd := &index.Withdrawal{Package: "redis", Version: "7.2.4", Build: 1, Digest: "sha256:aa", Reason: "broken"}
	res := &WithdrawResult{Package: "redis", Version: "7.2.4", Build: 1, RootSuite: "unstable",
		Mirror: &publish.MirrorResult{Index: "_site/index.yaml"},
		Indexes: []Withdrawn{
			{Suite: "unstable", Withdrawal: wd, Index: &publish.Result{Index: "_site/unstable/index.yaml", Packages: 2, Versions: 3},
				Followers: []releaseset.Follower{{Constraint: "~7.2.4"}, {Constraint: "7.x", To: &index.IndexVersion{Version: "7.2.3", Build: 2}}}},
			{Suite: "stable"},
		}}
	var b bytes.Buffer
	if err := res.WriteText(&b, []trust.Signer{k}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"withdrew " + wd.String() + " (digest sha256:aa): broken",
		`kubepkg clusters running it with spec.version "~7.2.4" keep running it: no build left meets ~7.2.4, and fresh installs of ~7.2.4 find none`,
		`kubepkg clusters running it with spec.version "7.x" move to redis 7.2.3 build 2`,
		"wrote _site/unstable/index.yaml: 2 packages, 3 versions",
		"signed _site/unstable/index.yaml.sig (keyid " + k.KeyID() + ")",
		"suite stable does not hold redis@7.2.4 build 1",
		"wrote _site/index.yaml: suite unstable, also served at the site root (rootSuite)",
	}
	if got := strings.TrimSpace(b.String()); got != strings.Join(want, "\n") {
		t.Errorf("WriteText:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
