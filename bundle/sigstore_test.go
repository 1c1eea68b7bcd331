package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/sigstoretest"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/keyless"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/sitelayout"
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
	res, err := Import(context.Background(), out, f.trust, "oci://"+mirror+"/airgap", site, WithPlainHTTP(true), withNow(now))
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
		vb, err := verifyBundle(b, f.trust, nil, makeOptions([]Option{withNow(now)}))
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

// TestKeylessSigstoreTravels: a chart's keyless Sigstore bundle (signed
// against a loopback Sigstore, internal/sigstoretest) travels when Create
// is given the Sigstore trusted root and the site names the identity:
// the bundle carries it with the trusted root and the identity, Import
// checks it again and pushes it to the mirror, where the real cosign
// verifies the chart with the carried trusted root for that identity
// and refuses another. Without a trusted root it is left out with a
// note; a carried keyless bundle of another identity is a bad bundle.
func TestKeylessSigstoreTravels(t *testing.T) {
	f := newFixture(t, 5, generated.Add(30*24*time.Hour))
	repo, err := name.NewRepository(f.src+"/charts/web", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	chart, err := remote.Head(repo.Tag("1.0.0-1"))
	if err != nil {
		t.Fatal(err)
	}
	ss := sigstoretest.New(t)
	signer := func(wf string) *keyless.Signer {
		tok := ss.Token(sigstoretest.Workflow("acme/packages", wf))
		s, err := keyless.New(context.Background(), func(context.Context) (string, error) { return tok, nil }, keyless.WithFulcio(ss.FulcioURL), keyless.WithRekor(ss.RekorURL))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := signer("publish.yml")
	st, _ := sigbundle.NewStatement(repo.String(), chart.Digest.String(), sigbundle.SignPredicate, nil)
	sig, err := s.Sign(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	img, err := oci.ReferrerImage(*chart, sigbundle.MediaType, sigbundle.MediaType, sig, generated)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	if err := remote.Write(repo.Digest(d.String()), img); err != nil {
		t.Fatal(err)
	}
	id, _ := json.Marshal(s.Identity())
	if err := os.MkdirAll(filepath.Join(f.site, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.site, filepath.FromSlash(sitelayout.KeylessFile)), id, 0o644); err != nil {
		t.Fatal(err)
	}
	trustedFile := ss.TrustedRoot(t.TempDir())
	trusted, err := os.ReadFile(trustedFile)
	if err != nil {
		t.Fatal(err)
	}

	var notes bytes.Buffer
	logger := WithLogger(func(format string, args ...any) { fmt.Fprintf(&notes, format+"\n", args...) })
	if c := f.create(t, filepath.Join(t.TempDir(), "without.tar"), logger); slices.ContainsFunc(c.Files, func(s string) bool { return strings.HasPrefix(s, sigstoreDir) }) || !strings.Contains(notes.String(), "no Sigstore trusted root") {
		t.Errorf("without a trusted root the bundle carries %v; notes:\n%s", c.Files, &notes)
	}
	out := filepath.Join(t.TempDir(), "b.tar")
	c := f.create(t, out, WithTrustedRoot(trusted))
	var carried []string
	for _, file := range c.Files {
		if strings.HasPrefix(file, sigstoreDir) {
			carried = append(carried, file)
		}
	}
	if len(carried) != 3 || !slices.Contains(carried, sigstoreTrustedRoot) || !slices.Contains(carried, sigstoreIdentity) {
		t.Fatalf("the bundle carries Sigstore files %v, want the keyless bundle, %s and %s", carried, sigstoreTrustedRoot, sigstoreIdentity)
	}
	if in, err := Inspect(context.Background(), out, withNow(now)); err != nil {
		t.Errorf("Inspect: %v", err)
	} else if in.Sigstore != 1 {
		t.Errorf("Inspect: %d Sigstore bundles, want 1", in.Sigstore)
	}

	mirror := newRegistry(t)
	res, err := Import(context.Background(), out, f.trust, "oci://"+mirror+"/airgap", t.TempDir(), WithPlainHTTP(true), withNow(now))
	if err != nil {
		t.Fatal(err)
	}
	mirrored := strings.TrimPrefix(res.Locations.Charts[0].Mirror, "oci://")
	mirrored = mirrored[:strings.LastIndex(mirrored, ":")] + "@" + chart.Digest.String()
	cosign := func(subject string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, testenv.Tool(t, "cosign"), "verify", "--trusted-root", trustedFile, "--certificate-identity", subject,
			"--certificate-oidc-issuer", ss.IssuerURL, "--insecure-ignore-sct", "--allow-http-registry", mirrored)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"))
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if out, err := cosign(s.Identity().Subject); err != nil {
		t.Errorf("cosign verify %s in the mirror keyless: %v\n%s", mirrored, err, out)
	}
	if out, err := cosign("https://github.com/acme/packages/.github/workflows/other.yml@refs/heads/main"); err == nil {
		t.Errorf("cosign verify %s in the mirror for another workflow passed:\n%s", mirrored, out)
	}

	// A carried keyless bundle of another workflow of the same repository.
	b, err := open(out, makeOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	vb, err := verifyBundle(b, f.trust, nil, makeOptions([]Option{withNow(now)}))
	if err != nil || len(vb.sigstore) != 1 {
		t.Fatalf("verifyBundle kept %d Sigstore bundles (%v), want 1", len(vb.sigstore), err)
	}
	other, err := signer("other.yml").Sign(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	b.files[sigstoreDir+chart.Digest.Hex+"/"+strings.Repeat("4", 64)+".json"] = other
	if _, err := verifySigstore(b, vb.charts, []*trust.PublicKey{f.key.Public()}); !errors.Is(err, ErrBadBundle) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a carried keyless bundle of another workflow: err = %v, want a bad bundle", err)
	}
}
