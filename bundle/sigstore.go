package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/sigbundle"
	"kbuild.dev/kbuild/trust"
)

// sigstoreDir holds, in a bundle's metadata, the Sigstore bundles (cosign
// signatures and attestations, package sigbundle) of the bundled charts:
// sigstore/<chart manifest hex>/<sha256 of the bundle>.json. Import pushes
// each as a referrer of its chart in the mirror, where the chart keeps
// its manifest digest, so `cosign verify` and Flux verify the mirror's
// charts with the same public key.
const sigstoreDir = "sigstore/"

var sigstoreName = regexp.MustCompile(`^sigstore/([0-9a-f]{64})/[0-9a-f]{64}\.json$`)

// verifiers returns keys as the Verifier list sigbundle.Open takes.
func verifiers(keys []*trust.PublicKey) []trust.Verifier {
	out := make([]trust.Verifier, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// fetchSigstore returns, as bundle files, the Sigstore bundles among the
// referrers of each chart of arts that one of keys signed about that
// chart's manifest. Others (another key's, or about another manifest) are
// left behind with a note: the mirror could not verify them either.
func fetchSigstore(ctx context.Context, arts []*artifact, keys []*trust.PublicKey, kc *keylessCheck, o *options) (map[string][]byte, error) {
	ropts := o.remote(ctx)
	out := map[string][]byte{}
	for _, a := range arts {
		if a.chart == nil {
			continue
		}
		subject := a.repo.Digest(a.desc.Digest.String())
		idx, err := remote.Referrers(subject, ropts...)
		if err != nil {
			return nil, fmt.Errorf("%s: referrers of %s: %w", a.ref, subject, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, fmt.Errorf("%s: referrers of %s: %w", a.ref, subject, err)
		}
		for _, d := range m.Manifests {
			if d.ArtifactType != sigbundle.MediaType {
				continue
			}
			data, err := readReferrerLayer(a.repo.Digest(d.Digest.String()), ropts)
			if err != nil {
				return nil, fmt.Errorf("%s: Sigstore bundle %s: %w", a.ref, d.Digest, err)
			}
			if err := openSigstore(data, a.desc.Digest.String(), verifiers(keys), kc); err != nil {
				o.logf("note: %s: Sigstore bundle %s left out: %v", a.ref, d.Digest, err)
				continue
			}
			sum := sha256.Sum256(data)
			out[sigstoreDir+a.desc.Digest.Hex+"/"+hex.EncodeToString(sum[:])+".json"] = data
		}
	}
	return out, nil
}

// readReferrerLayer reads the one layer of the referrer ref, at most
// sigbundle.MaxBundleSize bytes.
func readReferrerLayer(ref name.Digest, ropts []remote.Option) ([]byte, error) {
	img, err := remote.Image(ref, ropts...)
	if err != nil {
		return nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	if len(m.Layers) != 1 || string(m.Layers[0].MediaType) != sigbundle.MediaType {
		return nil, fmt.Errorf("want one layer of %s", sigbundle.MediaType)
	}
	if m.Layers[0].Size > sigbundle.MaxBundleSize {
		return nil, fmt.Errorf("layer of %d bytes, more than the %d allowed", m.Layers[0].Size, sigbundle.MaxBundleSize)
	}
	l, err := img.LayerByDigest(m.Layers[0].Digest)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, sigbundle.MaxBundleSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != m.Layers[0].Size || sha256Hex(data) != m.Layers[0].Digest.String() {
		return nil, fmt.Errorf("layer is not the %d bytes of %s the manifest names", m.Layers[0].Size, m.Layers[0].Digest)
	}
	return data, nil
}

// signedChart is a bundled Sigstore bundle verified against the keys
// trusted to sign the index, and the chart it is about.
type signedChart struct {
	chart *pushable
	data  []byte
}

// verifySigstore checks every Sigstore bundle file of b: named after the
// manifest of a bundled chart, and signed by one of keys about that
// manifest, or keylessly for the identity and under the trusted root the
// bundle carries. A file that fails is a bad bundle: nothing is pushed.
func verifySigstore(b *opened, charts []*pushable, keys []*trust.PublicKey) ([]signedChart, error) {
	kc, err := bundledKeyless(b)
	if err != nil {
		return nil, err
	}
	byManifest := map[string]*pushable{}
	for _, c := range charts {
		byManifest[c.root.desc.Digest.Hex] = c
	}
	var out []signedChart
	for _, f := range slices.Sorted(maps.Keys(b.files)) {
		if !strings.HasPrefix(f, sigstoreDir) || f == sigstoreTrustedRoot || f == sigstoreIdentity {
			continue
		}
		m := sigstoreName.FindStringSubmatch(f)
		if m == nil {
			return nil, bad(b.file, "%s is not a Sigstore bundle's name (%s<manifest hex>/<sha256>.json)", f, sigstoreDir)
		}
		c := byManifest[m[1]]
		if c == nil {
			return nil, bad(b.file, "%s is about manifest sha256:%s, which is no bundled chart's", f, m[1])
		}
		if err := openSigstore(b.files[f], "sha256:"+m[1], verifiers(keys), kc); err != nil {
			return nil, bad(b.file, "%s (chart %s): %v", f, c.ref, err)
		}
		out = append(out, signedChart{chart: c, data: b.files[f]})
	}
	return out, nil
}

// pushSigstore pushes each verified Sigstore bundle as a referrer of its
// chart in the mirror.
func (p *pusher) pushSigstore(ctx context.Context, mirrorRepo func(*pushable) (name.Repository, error), sigs []signedChart) error {
	for _, s := range sigs {
		repo, err := mirrorRepo(s.chart)
		if err != nil {
			return err
		}
		img, err := oci.ReferrerImage(s.chart.root.desc, sigbundle.MediaType, sigbundle.MediaType, s.data, p.b.c.Created)
		if err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		if err := remote.Write(repo.Digest(d.String()), img, p.o.remote(ctx)...); err != nil {
			return fmt.Errorf("push the Sigstore bundle of %s to %s: %w", s.chart.ref, repo, err)
		}
	}
	return nil
}
