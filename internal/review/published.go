package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/index"
)

// ErrIndexNotFound is wrapped by FetchIndex's error when the index does not
// exist: a missing file or an HTTP 404 (nothing published yet).
var ErrIndexNotFound = errors.New("index not found")

// maxChartArchive caps the size of a chart archive that PullChart reads.
const maxChartArchive = 256 << 20

// FetchIndex reads index.yaml from location, a file path or an http(s)
// URL, with client (http.DefaultClient when nil), and parses it with
// index.ParseIndex. It does not verify signatures: the result is for
// comparing, never for publishing over.
func FetchIndex(ctx context.Context, location string, client *http.Client) (*index.RepositoryIndex, error) {
	data, err := readLocation(ctx, location, client)
	if err != nil {
		return nil, err
	}
	x, err := index.ParseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", location, err)
	}
	return x, nil
}

func readLocation(ctx context.Context, location string, client *http.Client) ([]byte, error) {
	if !strings.HasPrefix(location, "http://") && !strings.HasPrefix(location, "https://") {
		f, err := os.Open(location)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("index %s: %w", location, ErrIndexNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", location, err)
		}
		defer f.Close()
		return readCapped(location, f)
	}
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", location, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", location, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("index %s: HTTP 404: %w", location, ErrIndexNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("index %s: HTTP %s; check the URL and that the site is up", location, resp.Status)
	}
	return readCapped(location, resp.Body)
}

func readCapped(location string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, index.MaxIndexSize+1))
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", location, err)
	}
	if len(data) > index.MaxIndexSize {
		return nil, fmt.Errorf("index %s: larger than the %d bytes allowed", location, index.MaxIndexSize)
	}
	return data, nil
}

// PullOption configures PullChart.
type PullOption func(*pullConfig)

type pullConfig struct {
	plainHTTP bool
	keychain  authn.Keychain
	transport http.RoundTripper
}

// WithPlainHTTP talks plain HTTP to the registry (loopback registries in
// tests). Default false: HTTPS.
func WithPlainHTTP(plain bool) PullOption { return func(c *pullConfig) { c.plainHTTP = plain } }

// WithKeychain sets where registry credentials come from. Default: the
// Docker config and credential helpers (authn.DefaultKeychain); pass
// authn.NewMultiKeychain() to pull anonymously.
func WithKeychain(k authn.Keychain) PullOption { return func(c *pullConfig) { c.keychain = k } }

// WithTransport sets the HTTP transport. Default remote.DefaultTransport.
func WithTransport(t http.RoundTripper) PullOption { return func(c *pullConfig) { c.transport = t } }

// PullChart pulls the chart archive that ref pins, by its digest, from the
// OCI repository <ref.Repository>/<ref.Name>, and returns its bytes after
// checking their sha256 against ref.Digest while reading.
func PullChart(ctx context.Context, ref index.ChartRef, opts ...PullOption) ([]byte, error) {
	c := pullConfig{keychain: authn.DefaultKeychain, transport: remote.DefaultTransport}
	for _, o := range opts {
		o(&c)
	}
	repo, ok := strings.CutPrefix(ref.Repository, "oci://")
	if !ok {
		return nil, fmt.Errorf("chart %s: repository %q is not oci://HOST/PATH", ref.Name, ref.Repository)
	}
	if !strings.HasPrefix(ref.Digest, "sha256:") {
		return nil, fmt.Errorf("chart %s: digest %q is not sha256:<hex>", ref.Name, ref.Digest)
	}
	nopts := []name.Option{name.StrictValidation}
	if c.plainHTTP {
		nopts = append(nopts, name.Insecure)
	}
	where := strings.TrimSuffix(repo, "/") + "/" + ref.Name + "@" + ref.Digest
	d, err := name.NewDigest(where, nopts...)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", ref.Name, err)
	}
	layer, err := remote.Layer(d, remote.WithContext(ctx), remote.WithAuthFromKeychain(c.keychain), remote.WithTransport(c.transport))
	if err != nil {
		return nil, fmt.Errorf("chart %s: pull %s: %w", ref.Name, where, err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, fmt.Errorf("chart %s: pull %s: %w", ref.Name, where, err)
	}
	defer rc.Close()
	h := sha256.New()
	data, err := io.ReadAll(io.TeeReader(io.LimitReader(rc, maxChartArchive+1), h))
	if err != nil {
		return nil, fmt.Errorf("chart %s: pull %s: %w", ref.Name, where, err)
	}
	if len(data) > maxChartArchive {
		return nil, fmt.Errorf("chart %s: %s is larger than the %d bytes allowed", ref.Name, where, maxChartArchive)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != ref.Digest {
		return nil, fmt.Errorf("chart %s: %s: sha256 mismatch: the index pins %s, the registry served %s; the published chart was replaced", ref.Name, where, ref.Digest, got)
	}
	return data, nil
}

// Counterpart returns the entry of package name in x to compare a build of
// version and build against: that very version and build when x has it
// (so that a changed rebuild is caught), else the newest version. ok is
// false when x does not have the package.
func Counterpart(x *index.RepositoryIndex, name, version string, build int) (v *index.IndexVersion, ok bool) {
	p := x.Packages[name]
	if p == nil || len(p.Versions) == 0 {
		return nil, false
	}
	for i := range p.Versions {
		if p.Versions[i].Version == version && p.Versions[i].Build == build {
			return &p.Versions[i], true
		}
	}
	return &p.Versions[0], true
}

// Charts returns the distinct charts that the components of s point at,
// in the order of first use, with the install namespace of the first
// component that installs each (for rendering).
func Charts(s *index.PackageSpec) []PublishedChart {
	var out []PublishedChart
	seen := map[string]int{}
	for _, v := range s.Variants {
		for _, c := range v.Components {
			if c.Chart == nil {
				continue
			}
			ns := ""
			if c.Install != nil {
				ns = c.Install.Namespace
			}
			key := c.Chart.Name + "@" + c.Chart.Digest
			if i, ok := seen[key]; ok {
				if out[i].Namespace == "" {
					out[i].Namespace = ns
				}
				continue
			}
			seen[key] = len(out)
			out = append(out, PublishedChart{Ref: *c.Chart, Namespace: ns})
		}
	}
	return out
}

// PublishedChart is a chart a published spec points at.
type PublishedChart struct {
	Ref index.ChartRef
	// Namespace is the install namespace of the first component that
	// installs the chart, "" when none sets one.
	Namespace string
}
