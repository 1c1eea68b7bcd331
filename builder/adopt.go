package builder

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"reflect"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/fault"
)

// maxAdoptArchive caps the compressed published chart adoption reads
// (archiveFiles caps what it unpacks).
const maxAdoptArchive = 256 << 20

// ErrNotAdoptable is wrapped by the error returned when --adopt finds a
// published chart whose files differ from the build's.
var ErrNotAdoptable = fault.New(fault.Refused, "the published chart differs from this build")

// adopted is a published chart kept in place of a build's archive.
type adopted struct {
	archiveDigest string
	manifest      v1.Hash
	desc          *v1.Descriptor
}

// adoptPublished compares the chart published as img with the archive a
// built: the same files with the same bytes, Chart.yaml compared by
// meaning (its YAML decoded), since another tool (kubepkg, helm package)
// writes the same chart as other archive bytes. It returns the published
// archive's digest, or an error naming the first differing file.
func adoptPublished(img v1.Image, a *Archive) (*adopted, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	var layer v1.Layer
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for i, l := range layers {
		if i < len(m.Layers) && m.Layers[i].MediaType == oci.ChartLayerMediaType {
			layer = l
		}
	}
	if layer == nil {
		return nil, fmt.Errorf("%w: it has no Helm chart layer (%s)", ErrNotAdoptable, oci.ChartLayerMediaType)
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxAdoptArchive+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxAdoptArchive {
		return nil, fmt.Errorf("%w: its archive is larger than %d MiB", ErrNotAdoptable, maxAdoptArchive>>20)
	}
	d, err := layer.Digest()
	if err != nil {
		return nil, err
	}
	published, err := archiveFiles(data)
	if err != nil {
		return nil, fmt.Errorf("published chart: %w", err)
	}
	built, err := archiveFiles(a.Data)
	if err != nil {
		return nil, fmt.Errorf("built chart: %w", err)
	}
	if name := firstDifference(published, built); name != "" {
		return nil, fmt.Errorf("%w: first differing file %s", ErrNotAdoptable, name)
	}
	desc, err := descriptorOf(img)
	if err != nil {
		return nil, err
	}
	return &adopted{archiveDigest: d.String(), manifest: desc.Digest, desc: desc}, nil
}

func descriptorOf(img v1.Image) (*v1.Descriptor, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	return &v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: d}, nil
}

// firstDifference returns the first file, in sorted order, that is in one
// chart and not the other or differs in content (the chart's Chart.yaml by
// its decoded meaning; modes are not compared, as tools write them
// differently), or "".
func firstDifference(a, b map[string]archiveFile) string {
	for _, n := range unionNames(a, b) {
		x, inA := a[n]
		y, inB := b[n]
		switch {
		case !inA:
			return n + " (only in this build)"
		case !inB:
			return n + " (only in the published chart)"
		case path.Base(n) == "Chart.yaml" && strings.Count(n, "/") == 1:
			if !sameYAML(x.data, y.data) {
				return n + " (its fields differ)"
			}
		case !bytes.Equal(x.data, y.data):
			return n
		}
	}
	return ""
}

func sameYAML(a, b []byte) bool {
	var x, y any
	if yaml.Unmarshal(a, &x) != nil || yaml.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
