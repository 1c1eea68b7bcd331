package evidence

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/package-url/packageurl-go"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/spec"
)

// ErrNotInIndex is wrapped when the version evidence is about is not in
// the index it is checked against (for a suite, not in that suite).
var ErrNotInIndex = errors.New("not in the index")

// SpecSubject is the subject name of a version's spec digest, the package
// URL pkg:kubepkg/NAME@VERSION?build=N (written by packageurl-go, so a '+'
// in VERSION is percent-encoded as the purl specification requires).
func SpecSubject(name, version string, build int) string {
	q := packageurl.Qualifiers{{Key: "build", Value: strconv.Itoa(build)}}
	return packageurl.NewPackageURL("kubepkg", "", name, version, q, "").ToString()
}

// Subjects returns the subjects of t as x pins them, sorted by name: the
// spec digest of its entry, the archive digest of each chart and the
// manifest digest of each image; for a release set, the same for every
// member. An image not pinned by digest is refused: evidence is about
// exact digests.
func Subjects(x *index.RepositoryIndex, t Target) ([]Subject, error) {
	e := x.Find(t.Package, t.Version, t.Build)
	if e == nil {
		return nil, fmt.Errorf("%s is not in the index; attest a version the index publishes: %w", t, ErrNotInIndex)
	}
	entries := []*index.IndexVersion{e}
	names := []Target{{Package: t.Package, Version: e.Version, Build: t.Build}} // the published spelling
	if _, isSet, _ := releaseset.Members(&e.Spec); isSet {
		r, err := releaseset.Resolve(x, t.Package, t.Version, t.Build)
		if err != nil {
			return nil, err
		}
		for _, m := range r.Members {
			entries = append(entries, m.Entry)
			names = append(names, Target{Package: m.Package, Version: m.Version, Build: m.Build})
		}
	}
	seen := map[string]string{}
	var out []Subject
	add := func(name, digest string) error {
		h, err := spec.ParseDigest(digest)
		if err != nil {
			return fmt.Errorf("%s has digest %q, not sha256:<64 hex>", name, digest)
		}
		hex := h.Hex
		if d, dup := seen[name]; dup {
			if d != hex {
				return fmt.Errorf("%s is pinned to two digests (sha256:%s and sha256:%s)", name, d, hex)
			}
			return nil
		}
		seen[name] = hex
		out = append(out, Subject{Name: name, Digest: map[string]string{"sha256": hex}})
		return nil
	}
	for i, e := range entries {
		n := names[i]
		if err := add(SpecSubject(n.Package, n.Version, n.Build), e.Digest); err != nil {
			return nil, err
		}
		for _, v := range e.Spec.Variants {
			for _, c := range v.Components {
				if c.Chart == nil {
					continue
				}
				ref := c.Chart.Repository + "/" + c.Chart.Name + ":" + strings.ReplaceAll(c.Chart.Version, "+", "_")
				if err := add(ref, c.Chart.Digest); err != nil {
					return nil, err
				}
			}
		}
		for _, img := range e.Spec.Images {
			name, digest, ok := strings.Cut(img, "@")
			if !ok {
				return nil, fmt.Errorf("%s: image %s is not pinned by digest; evidence needs exact digests, so pin it in the recipe", n, img)
			}
			if err := add(name, digest); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
