package chartpin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/spec"
)

// PullPinned pulls the chart archive that ref pins, by its digest, from the
// OCI repository <ref.Repository>/<ref.Name> with the default keychain's
// credentials, and returns its bytes after checking their sha256 against
// ref.Digest while reading (at most MaxChartSize bytes). plain says which
// registries may be reached over plain HTTP.
func PullPinned(ctx context.Context, ref spec.ChartRef, plain plainhttp.Policy) ([]byte, error) {
	repo, ok := strings.CutPrefix(ref.Repository, "oci://")
	if !ok {
		return nil, fmt.Errorf("chart %s: repository %q is not oci://HOST/PATH", ref.Name, ref.Repository)
	}
	if _, err := spec.ParseDigest(ref.Digest); err != nil {
		return nil, fmt.Errorf("chart %s: digest %q is not sha256:<hex>: %w", ref.Name, ref.Digest, err)
	}
	where := strings.TrimSuffix(repo, "/") + "/" + ref.Name + "@" + ref.Digest
	nopts := []name.Option{name.StrictValidation}
	if d, err := name.NewDigest(where, nopts...); err == nil && plain.Allows(d.RegistryStr()) {
		nopts = append(nopts, name.Insecure)
	}
	d, err := name.NewDigest(where, nopts...)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", ref.Name, err)
	}
	layer, err := remote.Layer(d, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain), registryTransport(0))
	if err != nil {
		return nil, fmt.Errorf("chart %s: pull %s: %w", ref.Name, where, err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, fmt.Errorf("chart %s: pull %s: %w", ref.Name, where, err)
	}
	defer rc.Close()
	h := sha256.New()
	data, err := io.ReadAll(io.TeeReader(io.LimitReader(rc, MaxChartSize+1), h))
	if err != nil {
		return nil, fmt.Errorf("chart %s: pull %s: %w", ref.Name, where, err)
	}
	if len(data) > MaxChartSize {
		return nil, fmt.Errorf("chart %s: %s is larger than the %d bytes allowed", ref.Name, where, MaxChartSize)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != ref.Digest {
		return nil, fmt.Errorf("chart %s: %s: sha256 mismatch: the index pins %s, the registry served %s; the published chart was replaced", ref.Name, where, ref.Digest, got)
	}
	return data, nil
}
