package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/recipe"
)

// ErrNoPlatform is wrapped by ResolveImage's error for a tag that has no
// image for the platform asked for.
var ErrNoPlatform = errors.New("no image for the platform")

// ResolveImage returns the image repository:tag pinned by the digest the
// tag has now: an image index's when it lists a manifest for platform
// (OS/ARCH), a single image's when its config says it is for platform.
// Any other answer wraps ErrNoPlatform: pinning it would install nothing
// that runs.
func (l *Looker) ResolveImage(ctx context.Context, ref, platform string) (recipe.Image, error) {
	im, err := recipe.ParseImage(ref)
	if err != nil {
		return recipe.Image{}, err
	}
	if l.offline {
		return recipe.Image{}, fmt.Errorf("image %s: %w", ref, ErrOffline)
	}
	opts := []name.Option{name.WeakValidation}
	if r, err := name.ParseReference(im.String(), opts...); err == nil && l.plain.Allows(r.Context().RegistryStr()) {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(im.String(), opts...)
	if err != nil {
		return recipe.Image{}, fmt.Errorf("image %s: %w", im, err)
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(l.rt), remote.WithAuthFromKeychain(l.keychain)}
	desc, err := remote.Get(r, ropts...)
	if err != nil {
		return recipe.Image{}, fmt.Errorf("image %s: %w", im, err)
	}
	osName, arch, _ := strings.Cut(platform, "/")
	want := v1.Platform{OS: osName, Architecture: arch}
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return recipe.Image{}, fmt.Errorf("image %s: %w", im, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return recipe.Image{}, fmt.Errorf("image %s: %w", im, err)
		}
		var have []string
		for _, d := range m.Manifests {
			if d.Platform != nil && d.Platform.Satisfies(want) {
				return im.WithDigest(desc.Digest.String()), nil
			}
			if d.Platform != nil {
				have = append(have, d.Platform.OS+"/"+d.Platform.Architecture)
			}
		}
		return recipe.Image{}, fmt.Errorf("image %s: its index %s lists no manifest for %s (it has %s): %w; pin a tag built for %s, or set platform: in watch.yaml", im, desc.Digest, platform, strings.Join(have, ", "), ErrNoPlatform, platform)
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			return recipe.Image{}, fmt.Errorf("image %s: %w", im, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return recipe.Image{}, fmt.Errorf("image %s: reading its config: %w", im, err)
		}
		if cf.OS != osName || cf.Architecture != arch {
			return recipe.Image{}, fmt.Errorf("image %s: its one manifest %s is for %s/%s, not %s: %w", im, desc.Digest, cf.OS, cf.Architecture, platform, ErrNoPlatform)
		}
		return im.WithDigest(desc.Digest.String()), nil
	}
	return recipe.Image{}, fmt.Errorf("image %s: media type %s is neither an image nor an index: %w", im, desc.MediaType, ErrNoPlatform)
}
