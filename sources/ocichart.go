package sources

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/recipe"
)

// HelmChartLayerMediaType is the media type of the chart archive layer of
// a Helm chart stored in an OCI registry.
const HelmChartLayerMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// downloadOCIChart reads the chart's manifest from its OCI repository
// (tag = version with '+' as '_'), checks that its chart layer is the
// pinned archive and downloads that blob into the cache.
func (f *Fetcher) downloadOCIChart(ctx context.Context, c *recipe.ChartSource, pin, what string) error {
	tag, manifest, layer, err := f.ociChartLayer(ctx, c, what)
	if err != nil {
		return err
	}
	if pin == manifest.String() {
		return fmt.Errorf("%s: the pin %s is the digest of the OCI manifest of %s, not of the chart archive; pin the archive instead: digest: %s", what, pin, tag, layer.Digest)
	}
	if layer.Digest.String() != pin {
		return &DigestMismatchError{What: what, URL: tag.String(), Expected: pin, Got: layer.Digest.String(), Size: layer.Size,
			Note: fmt.Sprintf("the digest received is that of the chart layer listed in manifest %s", manifest)}
	}
	_, err = f.registryBlob(ctx, tag.Context(), pin, verifyBlob(what, tag, pin))
	return err
}

// ociChartLayer reads the manifest of chart c from its OCI repository (tag =
// version with '+' as '_') and returns the tag, the manifest digest and the
// descriptor of its Helm chart layer.
func (f *Fetcher) ociChartLayer(ctx context.Context, c *recipe.ChartSource, what string) (name.Tag, v1.Hash, *v1.Descriptor, error) {
	ref := ociChartRef(c)
	tag, err := name.NewTag(ref, f.nameOptions(ref)...)
	if err != nil {
		return tag, v1.Hash{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	f.logf("resolving %s", tag)
	desc, err := remote.Get(tag, f.remoteOptions(ctx)...)
	if err != nil {
		return tag, v1.Hash{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil || desc.MediaType.IsIndex() {
		return tag, v1.Hash{}, nil, fmt.Errorf("%s: %s is a %s, not a Helm chart manifest", what, tag, desc.MediaType)
	}
	var types []string
	for i, l := range m.Layers {
		types = append(types, string(l.MediaType))
		if l.MediaType == HelmChartLayerMediaType {
			return tag, desc.Digest, &m.Layers[i], nil
		}
	}
	return tag, v1.Hash{}, nil, fmt.Errorf("%s: %s has no layer of media type %s (its layers: %s); is it a Helm chart?", what, tag, HelmChartLayerMediaType, strings.Join(types, ", "))
}

// ociChartRef returns the reference of chart c in its OCI repository:
// REGISTRY/REPO/NAME:TAG, the tag being the version with '+' as '_'.
func ociChartRef(c *recipe.ChartSource) string {
	return strings.TrimSuffix(strings.TrimPrefix(c.Repository, "oci://"), "/") + "/" + c.Name + ":" + strings.ReplaceAll(c.Version, "+", "_")
}

// verifyBlob checks that a blob downloaded from tag's repository is want.
func verifyBlob(what string, tag name.Tag, want string) func(string, int64) error {
	return func(got string, n int64) error {
		if got != want {
			return &DigestMismatchError{What: what, URL: tag.Context().Digest(want).String(), Expected: want, Got: got, Size: n,
				Note: "the registry served a blob whose content does not match its digest"}
		}
		return nil
	}
}

// registryBlob downloads a blob of repo into the cache with the
// registry's authentication, verifying it as the Fetcher's downloads are.
func (f *Fetcher) registryBlob(ctx context.Context, repo name.Repository, digest string, verify func(string, int64) error) (string, error) {
	auth, err := authn.Resolve(ctx, f.keychain, repo)
	if err != nil {
		return "", fmt.Errorf("credentials for %s: %w", repo, err)
	}
	rt, err := transport.NewWithContext(ctx, repo.Registry, auth, f.transport(), []string{repo.Scope(transport.PullScope)})
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", repo.Registry, err)
	}
	u := fmt.Sprintf("%s://%s/v2/%s/blobs/%s", repo.Registry.Scheme(), repo.RegistryStr(), repo.RepositoryStr(), digest)
	return f.httpDownload(ctx, &http.Client{Transport: rt}, u, verify)
}

// nameOptions returns the options to parse ref with: name.Insecure when the
// policy of WithPlainHTTP and WithPlainHTTPHosts allows plain HTTP to ref's
// registry.
func (f *Fetcher) nameOptions(ref string) []name.Option {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err == nil && f.PlainHTTP(r.Context().RegistryStr()) {
		return []name.Option{name.WeakValidation, name.Insecure}
	}
	return []name.Option{name.WeakValidation}
}

// PlainHTTP reports whether the registry (HOST or HOST:PORT) may be reached
// over plain HTTP: it is on loopback and WithPlainHTTP is set, or it is
// named by WithPlainHTTPHosts.
func (f *Fetcher) PlainHTTP(registry string) bool {
	return f.PlainPolicy().Allows(registry)
}

// PlainPolicy returns the registries the fetcher talks plain HTTP to
// (WithPlainHTTP, WithPlainHTTPHosts).
func (f *Fetcher) PlainPolicy() plainhttp.Policy {
	return plainhttp.Policy{Loopback: f.plainHTTP, Hosts: f.plainHosts}
}

func (f *Fetcher) remoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(f.keychain),
		remote.WithTransport(f.transport()),
		remote.WithRetryBackoff(remote.Backoff{Duration: f.backoff, Factor: 2, Steps: f.retries + 1}),
	}
}
