// Package chartpin checks that the charts an index pins are in their OCI
// registries with the pinned archive digests: it pulls each chart's Helm
// chart layer and hashes it.
package chartpin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/ocilimit"
	"kbuild.dev/kbuild/spec"
)

// ChartLayerMediaType is the media type of a Helm chart archive layer.
const ChartLayerMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// MaxChartSize caps a chart archive that Check downloads.
const MaxChartSize = 256 << 20

// Mismatch is a chart whose archive is not the one pinned.
type Mismatch struct {
	// Where names the version and component: "kubevirt 1.9.0 build 4
	// variant default component operator".
	Where  string
	Ref    string // registry/repository/name:tag
	Pinned string // digest in the index
	Got    string // digest of the archive pulled, or empty
	Err    error  // why the chart could not be checked, if it could not
}

func (m *Mismatch) Error() string {
	if m.Err != nil {
		return fmt.Sprintf("%s: chart %s: %v", m.Where, m.Ref, m.Err)
	}
	return fmt.Sprintf("%s: chart %s archive is %s, but the index pins %s; the chart was pushed again after the index was made",
		m.Where, m.Ref, m.Got, m.Pinned)
}

// Options of Check.
type Options struct {
	// PlainHTTP talks plain HTTP to registries (loopback registries in
	// tests).
	PlainHTTP bool
	// Jobs is how many charts are pulled at once (default 4).
	Jobs int
	// Timeout is the idle timeout of the registry connections (default
	// netdeadline.DefaultIdle).
	Timeout time.Duration
}

// registryTransport returns a transport on which every registry request
// and response body has the idle timeout idle (DefaultIdle when zero) and
// a budget proportional to its size.
func registryTransport(idle time.Duration) remote.Option {
	if idle <= 0 {
		idle = netdeadline.DefaultIdle
	}
	return remote.WithTransport(ocilimit.Transport(netdeadline.Transport(remote.DefaultTransport, idle)))
}

// Ref returns the OCI reference of a pinned chart: the repository without
// oci://, the chart name, and the version as a tag ('+' becomes '_').
func Ref(c *spec.ChartRef) string {
	return strings.TrimSuffix(strings.TrimPrefix(c.Repository, "oci://"), "/") + "/" + c.Name + ":" + strings.ReplaceAll(c.Version, "+", "_")
}

// Check pulls every chart x pins (each reference once) and returns the
// number of charts checked and one *Mismatch per chart that is missing,
// unreadable or different.
func Check(ctx context.Context, x *index.RepositoryIndex, o Options) (int, []*Mismatch) {
	type pin struct{ where, ref, digest string }
	seen := map[string]bool{}
	var pins []pin
	for pkg, p := range x.Packages {
		for _, v := range p.Versions {
			for _, va := range v.Spec.Variants {
				for _, c := range va.Components {
					if c.Chart == nil {
						continue
					}
					ref := Ref(c.Chart)
					if seen[ref+"@"+c.Chart.Digest] {
						continue
					}
					seen[ref+"@"+c.Chart.Digest] = true
					pins = append(pins, pin{fmt.Sprintf("%s %s build %d variant %s component %s", pkg, v.Version, v.Build, va.Name, c.Name), ref, c.Chart.Digest})
				}
			}
		}
	}
	sort.Slice(pins, func(i, j int) bool { return pins[i].where < pins[j].where })
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = 4
	}
	var mu sync.Mutex
	var bad []*Mismatch
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for _, p := range pins {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			got, err := archiveDigest(ctx, p.ref, o.PlainHTTP, o.Timeout)
			if err == nil && got == p.digest {
				return
			}
			mu.Lock()
			bad = append(bad, &Mismatch{Where: p.where, Ref: p.ref, Pinned: p.digest, Got: got, Err: err})
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(bad, func(i, j int) bool { return bad[i].Where < bad[j].Where })
	return len(pins), bad
}

// archiveDigest pulls the chart layer of ref and returns its sha256.
func archiveDigest(ctx context.Context, ref string, plainHTTP bool, idle time.Duration) (string, error) {
	var nopts []name.Option
	if plainHTTP {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return "", err
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain), registryTransport(idle))
	if err != nil {
		return "", err
	}
	m, err := img.Manifest()
	if err != nil {
		return "", err
	}
	for _, l := range m.Layers {
		if l.MediaType != ChartLayerMediaType {
			continue
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return "", err
		}
		rc, err := layer.Compressed()
		if err != nil {
			return "", err
		}
		defer rc.Close()
		h := sha256.New()
		n, err := io.Copy(h, io.LimitReader(rc, MaxChartSize+1))
		if err != nil {
			return "", fmt.Errorf("pull chart layer: %w", err)
		}
		if n > MaxChartSize {
			return "", fmt.Errorf("chart archive is larger than %d bytes", MaxChartSize)
		}
		return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
	}
	return "", fmt.Errorf("no layer of media type %s: not a Helm chart", ChartLayerMediaType)
}
