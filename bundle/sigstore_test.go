package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/trust"
)

// attachBundle signs a statement of predicateType about the chart's
// manifest with signer and pushes it as a referrer of the chart in the
// source registry, as kbuild publish does; it returns the bundle.
func attachBundle(t *testing.T, repo name.Repository, chart *v1.Descriptor, predicateType string, signer trust.Signer) []byte {
	t.Helper()
	st, err := sigbundle.NewStatement(repo.String(), chart.Digest.String(), predicateType, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := sigbundle.Sign(st, signer)
	if err != nil {
		t.Fatal(err)
	}
	img, err := oci.ReferrerImage(*chart, sigbundle.MediaType, sigbundle.MediaType, data, generated)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	if err := remote.Write(repo.Digest(d.String()), img); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSigstoreTravels: the Sigstore bundles a chart carries in the source
// registry travel in the air-gap bundle (those the index's keys signed;
// a stranger's is left out) and Import pushes them as referrers of the
// chart in the mirror, where the chart keeps its digest: cosign verifies
// the mirrored chart with the repository's public key. A bundle file
// signed by another key, or about a manifest the bundle does not hold, is
// refused before anything is pushed.
func TestSigstoreTravels(t *testing.T) {
	f := newFixture(t, 5, generated.Add(30*24*time.Hour))
	repo, err := name.NewRepository(f.src+"/charts/web", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	chart, err := remote.Head(repo.Tag("1.0.0-1"))
	if err != nil {
		t.Fatal(err)
	}
	sig := attachBundle(t, repo, chart, sigbundle.SignPredicate, f.key)
	stranger, _ := trust.GenerateKey(rand.New(rand.NewSource(11)))
	attachBundle(t, repo, chart, sigbundle.SignPredicate, stranger)

	out := filepath.Join(t.TempDir(), "b.tar")
	var notes bytes.Buffer
	c := f.create(t, out, WithLogger(func(format string, args ...any) {
		fmt.Fprintf(&notes, format+"\n", args...)
	}))
	var carried []string
	for _, file := range c.Files {
		if strings.HasPrefix(file, sigstoreDir) {
			carried = append(carried, file)
		}
	}
	if len(carried) != 1 || !strings.HasPrefix(carried[0], sigstoreDir+chart.Digest.Hex+"/") {
		t.Fatalf("the bundle carries Sigstore files %v, want the one the index's key signed, under the chart's manifest %s", carried, chart.Digest)
	}
	if !strings.Contains(notes.String(), "left out") {
		t.Errorf("Create did not say it left the stranger's bundle out:\n%s", &notes)
	}

	mirror := newRegistry(t)
	site := t.TempDir()
	res, err := Import(context.Background(), out, f.trust, "oci://"+mirror+"/airgap", site, WithPlainHTTP(true), WithNow(now))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(site, "sigstore")); err == nil {
		t.Errorf("Import wrote the Sigstore bundles into the site; they belong beside the charts in the mirror")
	}
	mirrored := strings.TrimPrefix(res.Locations.Charts[0].Mirror, "oci://")
	mirrored = mirrored[:strings.LastIndex(mirrored, ":")] + "@" + chart.Digest.String()
	md, err := name.NewDigest(mirrored, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, r := range testenv.Referrers(t, md) {
		if r.ArtifactType == sigbundle.MediaType {
			got = append(got, r.Payload)
		}
	}
	if len(got) != 1 || !bytes.Equal(got[0], sig) {
		t.Fatalf("the mirrored chart %s has %d Sigstore referrers, want the one signed bundle", md, len(got))
	}

	t.Run("refused", func(t *testing.T) {
		b, err := open(out, makeOptions(nil))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		keys := []*trust.PublicKey{f.key.Public()}
		vb, err := verifyBundle(b, f.trust, nil, makeOptions([]Option{WithNow(now)}))
		if err != nil {
			t.Fatal(err)
		}
		if len(vb.sigstore) != 1 {
			t.Fatalf("verifyBundle kept %d Sigstore bundles, want 1", len(vb.sigstore))
		}
		st, _ := sigbundle.NewStatement(repo.String(), chart.Digest.String(), sigbundle.SignPredicate, nil)
		strangers, _ := sigbundle.Sign(st, stranger)
		other := "sha256:" + strings.Repeat("1", 64)
		ost, _ := sigbundle.NewStatement(repo.String(), other, sigbundle.SignPredicate, nil)
		elsewhere, _ := sigbundle.Sign(ost, f.key)
		for _, tt := range []struct {
			file string
			data []byte
			want string
		}{
			{sigstoreDir + chart.Digest.Hex + "/" + strings.Repeat("2", 64) + ".json", strangers, "signed by none of the 1 trusted keys"},
			{sigstoreDir + strings.Repeat("1", 64) + "/" + strings.Repeat("3", 64) + ".json", elsewhere, "which is no bundled chart's"},
		} {
			b.files[tt.file] = tt.data
			_, err := verifySigstore(b, vb.charts, keys)
			delete(b.files, tt.file)
			if !errors.Is(err, ErrBadBundle) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: err = %v, want a bad bundle: %q", tt.file, err, tt.want)
			}
		}
	})

	// The real cosign CLI, as a cluster in the air gap would run it (or
	// Flux, with the same key), verifies the mirrored chart.
	t.Run("cosign", func(t *testing.T) {
		cosign := testenv.Tool(t, "cosign")
		pub := filepath.Join(t.TempDir(), "kbuild.pub")
		if err := os.WriteFile(pub, f.key.Public().PEM(), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, cosign, "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", md.String())
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("cosign verify %s in the mirror: %v\n%s", md, err, out)
		}
	})
}
