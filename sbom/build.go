package sbom

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// Build is one build of one package: its PackageSource spec, what the index
// says about the package, and the BuildInfo sidecar when there is one.
type Build struct {
	// Name is the package name.
	Name string
	// Description and Home are the package's description and home page (the
	// index's description and home); either may be empty.
	Description string
	Home        string
	// Spec is the PackageSource spec; Spec.Version and Spec.Build name the
	// build.
	Spec spec.PackageSpec
	// Digest is the spec digest as published. Empty means computed from
	// Spec; a Digest that does not match Spec is an error.
	Digest string
	// Info is the BuildInfo sidecar, nil when absent: the BOM then lacks
	// the build's upstream sources and its charts' manifest digests.
	Info *spec.BuildInfo
}

// FromRecord returns the Build of a build record and its BuildInfo sidecar
// (nil when absent), taking description and home from the record's
// annotations.
func FromRecord(rec spec.PackageSource, info *spec.BuildInfo) Build {
	return Build{
		Name:        rec.Metadata.Name,
		Description: rec.Metadata.Annotations[index.DescriptionAnnotation],
		Home:        rec.Metadata.Annotations[index.HomeAnnotation],
		Spec:        rec.Spec,
		Info:        info,
	}
}

// String returns "<name>@<version> build <build>".
func (b *Build) String() string {
	return fmt.Sprintf("%s@%s build %d", b.Name, b.Spec.Version, b.Spec.Build)
}

// key returns "<name>-<version>-<build>", the base of the build's file
// names.
func (b *Build) key() string {
	return fmt.Sprintf("%s-%s-%d", b.Name, b.Spec.Version, b.Spec.Build)
}

// specDigest returns the build's spec digest, checking a published one
// against the spec.
func (b *Build) specDigest() (string, error) {
	d, err := b.Spec.Digest()
	if err != nil {
		return "", fmt.Errorf("%s: encoding spec: %w", b, err)
	}
	if b.Digest != "" && b.Digest != d {
		return "", fmt.Errorf("%s: published digest %s %w: expected %s, got %s; the index was edited or corrupted", b, b.Digest, ErrIndexDigest, b.Digest, d)
	}
	return d, nil
}

// charts returns the distinct chart references of the build's components,
// in the order of first appearance.
func (b *Build) charts() []spec.ChartRef {
	seen := map[spec.ChartRef]bool{}
	var out []spec.ChartRef
	for _, v := range b.Spec.Variants {
		for _, c := range v.Components {
			if c.Chart == nil || seen[*c.Chart] {
				continue
			}
			seen[*c.Chart] = true
			out = append(out, *c.Chart)
		}
	}
	return out
}

// compareVersions orders versions by semver precedence when both parse,
// else as strings.
func compareVersions(a, b string) int {
	va, errA := semver.StrictNewVersion(a)
	vb, errB := semver.StrictNewVersion(b)
	if errA == nil && errB == nil {
		if c := va.Compare(vb); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}
