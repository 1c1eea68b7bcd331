package sources

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// fetchImage checks that an image exists under its pinned digest and keeps
// its manifest (a multi-arch index is kept whole) in the cache. The tag,
// if any, is informational: only the digest is resolved.
func (f *Fetcher) fetchImage(ctx context.Context, recipeDir, ref string) (*Result, error) {
	d, err := name.NewDigest(ref, f.nameOptions(ref)...)
	if err != nil {
		return nil, fmt.Errorf("image %q is not pinned by digest (registry/repo:tag@sha256:<hex>): %w", ref, err)
	}
	digest := d.DigestStr()
	if _, err := parseDigest(digest); err != nil {
		return nil, fmt.Errorf("image %q: %w", ref, err)
	}
	res := &Result{Resolved: spec.ResolvedSource{Kind: KindImage, Origin: ref, Digest: digest}}
	if f.cache.has(digest) {
		return res, nil
	}
	if f.offline {
		return nil, f.offlineError(recipeDir, "image "+ref)
	}
	f.logf("resolving %s", ref)
	desc, err := remote.Get(d, f.remoteOptions(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	_, err = f.cache.put(bytes.NewReader(desc.Manifest), f.maxDownload, func(got string, n int64) error {
		if got != digest {
			return &DigestMismatchError{What: "image", URL: ref, Expected: digest, Got: got, Size: n, Note: "the registry served a manifest whose content does not match the digest asked for"}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ResolveImage returns image in normal form (recipe.Image) pinned by the
// digest its tag has now in its registry; an image already pinned by digest
// is returned as it is. Only the manifest's descriptor is read. Plain HTTP
// follows WithPlainHTTP and WithPlainHTTPHosts; with WithOffline it fails
// with an error wrapping ErrOffline.
func (f *Fetcher) ResolveImage(ctx context.Context, image string) (string, error) {
	im, err := recipe.ParseImage(image)
	if err != nil {
		return "", err
	}
	if im.Digest != "" {
		return im.String(), nil
	}
	if f.offline {
		return "", fmt.Errorf("image %s: looking up its digest needs the network: %w", im, ErrOffline)
	}
	ref, err := name.ParseReference(im.String(), f.nameOptions(im.String())...)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", im, err)
	}
	f.logf("resolving %s", im)
	desc, err := remote.Head(ref, f.remoteOptions(ctx)...)
	if err != nil {
		return "", fmt.Errorf("image %s: looking up its digest: %w", im, err)
	}
	return im.WithDigest(desc.Digest.String()).String(), nil
}

// Mirror copies the image ref (pinned by digest; an index with all its
// images) into the repository dst under the same digest and returns the
// new reference. Nothing is copied when dst already has the digest; blobs
// dst already has are skipped, and blobs from the same registry are
// mounted across repositories where the registry allows it.
func (f *Fetcher) Mirror(ctx context.Context, ref string, dst name.Repository) (name.Digest, error) {
	src, err := name.NewDigest(ref, f.nameOptions(ref)...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("mirror %q: not pinned by digest: %w", ref, err)
	}
	target := dst.Digest(src.DigestStr())
	if f.offline {
		return name.Digest{}, fmt.Errorf("%w: mirroring %s to %s needs the network", ErrOffline, ref, dst)
	}
	opts := f.remoteOptions(ctx)
	if _, err := remote.Head(target, opts...); err == nil {
		f.logf("%s already has %s", dst, src.DigestStr())
		return target, nil
	}
	desc, err := remote.Get(src, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("mirror %s: %w", ref, err)
	}
	f.logf("mirroring %s to %s", ref, target)
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err == nil {
			err = remote.WriteIndex(target, idx, opts...)
		}
		if err != nil {
			return name.Digest{}, fmt.Errorf("mirror %s to %s: %w", ref, dst, err)
		}
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err == nil {
			err = remote.Write(target, img, opts...)
		}
		if err != nil {
			return name.Digest{}, fmt.Errorf("mirror %s to %s: %w", ref, dst, err)
		}
	default:
		return name.Digest{}, fmt.Errorf("mirror %s: media type %s is neither an image nor an index", ref, desc.MediaType)
	}
	return target, nil
}

// MirrorPath returns the repository path, relative to a mirror registry,
// under which the image ref is mirrored: the original registry host
// followed by the original repository path, so
// quay.io/kubevirt/virt-api:v1.9.0@sha256:… mirrors to
// <registry>/quay.io/kubevirt/virt-api and nginx to
// <registry>/docker.io/library/nginx. Docker Hub is always docker.io; a
// port is joined with '-' since ':' cannot appear in a repository path
// (localhost:5000/app → localhost-5000/app). It returns "" when ref is not
// an image reference.
func MirrorPath(ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ""
	}
	host := r.Context().RegistryStr()
	if host == name.DefaultRegistry {
		host = "docker.io"
	}
	host = strings.NewReplacer(":", "-", "[", "", "]", "").Replace(strings.ToLower(host))
	return host + "/" + r.Context().RepositoryStr()
}
