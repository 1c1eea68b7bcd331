package builder

import (
	"context"
	"maps"
	"slices"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"

	"kbuild.dev/kbuild/recipe"
)

// ImageEntry is one line of a package.images block as PlanImages proposes
// it.
type ImageEntry struct {
	// Ref is the reference to write: pinned by digest unless Err is set.
	Ref string
	// Declared is the entry of package.images this one keeps or replaces
	// ("" for an image only the charts name).
	Declared string
	// Charts are the charts that render the image, sorted; none for an
	// image the recipe declares and an operator deploys at run time.
	Charts []string
	// Err says why the digest could not be looked up; Ref is then the
	// unpinned reference.
	Err error
}

// PlanImages proposes the package.images block of a prepared recipe: every
// image the recipe declares, kept (and pinned when it has no digest yet),
// whether or not a chart renders it, since operators deploy images no chart
// names; and every image the charts render that no entry pins, pinned by
// resolve. Entries come in declaration order, then the new ones sorted.
func PlanImages(ctx context.Context, p *Prepared, resolve func(context.Context, string) (string, error)) []ImageEntry {
	declared := p.Recipe.Spec.Package.Images
	rendered := map[string][]string{} // image -> charts
	for _, c := range p.Charts {
		for _, img := range c.Rendered.Images {
			rendered[img] = append(rendered[img], c.Key)
		}
	}
	out := make([]ImageEntry, len(declared))
	byDeclared := map[string]int{}
	for i, d := range declared {
		out[i] = ImageEntry{Ref: d, Declared: d}
		byDeclared[d] = i
	}
	var extra []string
	for _, img := range slices.Sorted(maps.Keys(rendered)) {
		if pin, ok := PinFor(img, declared); ok {
			i := byDeclared[pin]
			out[i].Charts = append(out[i].Charts, rendered[img]...)
			continue
		}
		if i := slices.IndexFunc(declared, func(d string) bool { return listed(img, []string{d}) }); i >= 0 {
			out[i].Charts = append(out[i].Charts, rendered[img]...)
			continue
		}
		extra = append(extra, img)
	}
	for _, img := range extra {
		out = append(out, ImageEntry{Ref: img, Charts: rendered[img]})
	}
	for i := range out {
		e := &out[i]
		sort.Strings(e.Charts)
		e.Charts = slices.Compact(e.Charts)
		if im, err := recipe.ParseImage(e.Ref); err == nil && im.Digest == "" {
			if pin, err := resolve(ctx, e.Ref); err != nil {
				e.Ref, e.Err = im.String(), err
			} else {
				e.Ref = pin
			}
		}
	}
	return out
}

// PinFor returns the entry of pinned that pins image: the same repository
// (both in normal form, see recipe.Image) and either the same digest, or
// for an image without digest the same tag. A pin by digest alone pins a
// reference without tag (":latest"). ok is false when none does.
func PinFor(image string, pinned []string) (pin string, ok bool) {
	want, err := recipe.ParseImage(image)
	if err != nil {
		return "", false
	}
	for _, p := range pinned {
		have, err := recipe.ParseImage(p)
		if err != nil || have.Repository != want.Repository || have.Digest == "" {
			continue
		}
		switch {
		case want.Digest != "":
			ok = want.Digest == have.Digest
		default:
			ok = want.Tag == have.Tag || (have.Tag == "" && want.Tag == name.DefaultTag)
		}
		if ok {
			return p, true
		}
	}
	return "", false
}
