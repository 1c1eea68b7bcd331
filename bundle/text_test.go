package bundle

import (
	"strings"
	"testing"
	"time"
)

func TestInspectionWriteText(t *testing.T) {
	in := &Inspection{
		Contents: Contents{
			Created:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Index:    "https://example.com/index.yaml",
			Packages: []Package{{Name: "a", Version: "1.0", Build: 2, Digest: "sha256:aa", Reason: "named"}},
			Charts:   []Chart{{Ref: "r/a/a:1.0-2", Digest: "sha256:cc", PinnedBy: []string{"a 1.0 build 2"}}},
			Images:   []Image{{Ref: "r/img@sha256:ii", Size: 3 << 20, Platforms: []string{"linux/amd64"}}},
		},
		Generated: "2026-01-01T00:00:00Z", Expires: "2026-02-01T00:00:00Z", Blobs: 7, Bytes: 1536,
		SignedBy: []IndexSigner{{KeyID: "k1", KeyFile: "keys/k1.pub", Checked: true}, {KeyID: "k2"}, {}},
		Sigstore: 1,
	}
	var b strings.Builder
	if err := in.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `created: 2026-01-02T03:04:05Z
index: https://example.com/index.yaml (generated 2026-01-01T00:00:00Z, expires 2026-02-01T00:00:00Z)
index signed by k1 (keys/k1.pub, carried in the bundle; import checks the signature against your keys)
index signed by k2, as index.yaml.sig says (the bundle carries no such key; import checks it against your keys)
index signed by a key the bundle does not carry (index.yaml.sig names no keyid); import checks it against your keys
cosign signatures and attestations of the charts: 1
7 blobs, 1.5 KiB

packages:
  a 1.0 build 2  sha256:aa  (named)
charts:
  oci://r/a/a:1.0-2  archive sha256:cc  pinned by a 1.0 build 2
images:
  r/img@sha256:ii  3.0 MiB platforms linux/amd64  pinned by NOTHING in the bundled index (import will refuse it)
`
	if b.String() != want {
		t.Errorf("WriteText =\n%s\nwant\n%s", b.String(), want)
	}
	for n, want := range map[int64]string{12: "12 B", 2048: "2.0 KiB", 5 << 30: "5.0 GiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestImportedWriteText: the index to subscribe to is the re-signed one
// when Import wrote it, the upstream one otherwise, and the node settings
// are named when written.
func TestImportedWriteText(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r        Imported
		want     []string
		wantNone []string
	}{
		{"upstream index", Imported{}, []string{
			"index: site/index.yaml (signed upstream; subscribe with the same keys)\n",
			"charts and images: oci://mirror.example/kp\n",
			"subscribe to site/index.yaml with the upstream keys: its charts still point at the upstream registry, so clusters need node settings (the import writes them when asked) to pull them from oci://mirror.example/kp, or import with a signing key to write site/mirror/index.yaml",
			"cosign verify --key index.pub --insecure-ignore-tlog=true mirror.example/kp/...@sha256:...)\n",
		}, []string{"node settings:", "index with charts at the mirror"}},
		{"re-signed, node settings", Imported{Resigned: true, NodeConfigDir: "nodes"}, []string{
			"index with charts at the mirror: site/mirror/index.yaml (signed by the import's key): subscribe to this one, with that key's public key\n",
			"node settings: nodes (containerd certs.d, Talos patch, CRI-O drop-in)\n",
		}, []string{"subscribe to site/index.yaml with the upstream keys"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.r.WriteText(&b, "oci://mirror.example/kp", "site/"); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("WriteText lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(b.String(), w) {
					t.Errorf("WriteText has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
