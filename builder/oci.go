package builder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"helm.sh/helm/v3/pkg/chart"
)

// Helm's OCI media types.
const (
	ChartConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	ChartLayerMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// chartImage is a Helm chart as an OCI artifact: the config is Chart.yaml
// as JSON and the one layer is the chart archive, as `helm push` writes them.
type chartImage struct {
	manifest []byte
	config   []byte
	layer    v1.Layer
}

var _ partial.CompressedImageCore = (*chartImage)(nil)

// ChartImage returns the OCI image of a packed chart. Its manifest is
// deterministic: annotations come from Chart.yaml and created is the given
// time (SOURCE_DATE_EPOCH), never the clock.
func ChartImage(a *Archive, meta *chart.Metadata, created time.Time) (v1.Image, error) {
	config, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	layer := static.NewLayer(a.Data, ChartLayerMediaType)
	ld, err := layer.Digest()
	if err != nil {
		return nil, err
	}
	ann := map[string]string{
		"org.opencontainers.image.created": created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.title":   meta.Name,
		"org.opencontainers.image.version": meta.Version,
	}
	if meta.Description != "" {
		ann["org.opencontainers.image.description"] = meta.Description
	}
	if meta.Home != "" {
		ann["org.opencontainers.image.url"] = meta.Home
	}
	if len(meta.Sources) > 0 {
		ann["org.opencontainers.image.source"] = meta.Sources[0]
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config: v1.Descriptor{
			MediaType: ChartConfigMediaType,
			Size:      int64(len(config)),
			Digest:    sha256Hash(config),
		},
		Layers: []v1.Descriptor{{
			MediaType: ChartLayerMediaType,
			Size:      int64(len(a.Data)),
			Digest:    ld,
		}},
		Annotations: ann,
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&chartImage{manifest: raw, config: config, layer: layer})
}

func (c *chartImage) RawConfigFile() ([]byte, error)      { return c.config, nil }
func (c *chartImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (c *chartImage) RawManifest() ([]byte, error)        { return c.manifest, nil }
func (c *chartImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, _ := c.layer.Digest(); d == h {
		return c.layer, nil
	}
	if sha256Hash(c.config) == h {
		return static.NewLayer(c.config, ChartConfigMediaType), nil
	}
	return nil, fmt.Errorf("chart image has no blob %s", h)
}

func sha256Hash(b []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h
}
