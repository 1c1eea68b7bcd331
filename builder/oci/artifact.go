package oci

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

// artifact is an OCI image manifest written by kbuild with its blobs
// held in memory: a Helm chart, or a provenance referrer.
type artifact struct {
	manifest []byte
	config   []byte
	configMT types.MediaType
	layer    v1.Layer
}

var _ partial.CompressedImageCore = (*artifact)(nil)

// ChartImage returns the OCI image of a packed chart (the .tgz bytes
// archive) as `helm push` writes it: the config is Chart.yaml as JSON and
// the one layer is the archive.
// Its manifest is deterministic: annotations come from Chart.yaml and
// created is the given time (SOURCE_DATE_EPOCH), never the clock.
func ChartImage(archive []byte, meta *chart.Metadata, created time.Time) (v1.Image, error) {
	config, err := json.Marshal(meta)
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
	return newArtifact(v1.Manifest{Annotations: ann}, "", ChartConfigMediaType, config, ChartLayerMediaType, archive)
}

// emptyConfigMediaType is the OCI empty descriptor's media type; its blob is "{}".
const emptyConfigMediaType types.MediaType = "application/vnd.oci.empty.v1+json"

// ReferrerImage returns an artifact that refers to subject (through the
// manifest's subject field) and carries data as its one layer.
func ReferrerImage(subject v1.Descriptor, artifactType string, layerMediaType types.MediaType, data []byte, created time.Time) (v1.Image, error) {
	subject.Annotations, subject.Platform, subject.URLs = nil, nil, nil
	m := v1.Manifest{
		Subject:     &subject,
		Annotations: map[string]string{"org.opencontainers.image.created": created.UTC().Format(time.RFC3339)},
	}
	return newArtifact(m, artifactType, emptyConfigMediaType, []byte("{}"), layerMediaType, data)
}

// manifest is an image manifest with the artifactType field, which
// v1.Manifest lacks.
type manifest struct {
	v1.Manifest
	ArtifactType string `json:"artifactType,omitempty"`
}

func newArtifact(m v1.Manifest, artifactType string, configMT types.MediaType, config []byte, layerMT types.MediaType, data []byte) (v1.Image, error) {
	layer := static.NewLayer(data, layerMT)
	ld, err := layer.Digest()
	if err != nil {
		return nil, err
	}
	m.SchemaVersion = 2
	m.MediaType = types.OCIManifestSchema1
	m.Config = v1.Descriptor{MediaType: configMT, Size: int64(len(config)), Digest: sha256Hash(config)}
	m.Layers = []v1.Descriptor{{MediaType: layerMT, Size: int64(len(data)), Digest: ld}}
	raw, err := json.Marshal(manifest{m, artifactType})
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&artifact{manifest: raw, config: config, configMT: configMT, layer: layer})
}

func (c *artifact) RawConfigFile() ([]byte, error)      { return c.config, nil }
func (c *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (c *artifact) RawManifest() ([]byte, error)        { return c.manifest, nil }
func (c *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, _ := c.layer.Digest(); d == h {
		return c.layer, nil
	}
	if sha256Hash(c.config) == h {
		return static.NewLayer(c.config, c.configMT), nil
	}
	return nil, fmt.Errorf("artifact has no blob %s", h)
}

func sha256Hash(b []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h
}
