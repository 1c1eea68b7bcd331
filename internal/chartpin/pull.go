package chartpin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Pull returns the chart archive (the Helm chart layer) of the OCI
// reference ref and its sha256, at most MaxChartSize bytes, with the
// default keychain's credentials.
func Pull(ctx context.Context, ref string, plainHTTP bool) (data []byte, digest string, err error) {
	var nopts []name.Option
	if plainHTTP {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return nil, "", err
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, "", err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, "", err
	}
	for _, l := range m.Layers {
		if l.MediaType != ChartLayerMediaType {
			continue
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return nil, "", err
		}
		rc, err := layer.Compressed()
		if err != nil {
			return nil, "", err
		}
		defer rc.Close()
		data, err := io.ReadAll(io.LimitReader(rc, MaxChartSize+1))
		if err != nil {
			return nil, "", fmt.Errorf("pull chart layer of %s: %w", ref, err)
		}
		if len(data) > MaxChartSize {
			return nil, "", fmt.Errorf("%s: chart archive is larger than %d bytes", ref, MaxChartSize)
		}
		sum := sha256.Sum256(data)
		return data, "sha256:" + hex.EncodeToString(sum[:]), nil
	}
	return nil, "", fmt.Errorf("%s has no layer of media type %s: not a Helm chart", ref, ChartLayerMediaType)
}
