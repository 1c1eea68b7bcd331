package review

import (
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// Counterpart returns the entry of package name in x to compare a build of
// version and build against: that very version and build when x has it
// (so that a changed rebuild is caught), else the newest version. ok is
// false when x does not have the package.
func Counterpart(x *index.RepositoryIndex, name, version string, build int) (v *index.IndexVersion, ok bool) {
	p := x.Packages[name]
	if p == nil || len(p.Versions) == 0 {
		return nil, false
	}
	if v := x.Find(name, version, build); v != nil {
		return v, true
	}
	return &p.Versions[0], true
}

// Charts returns the distinct charts that the components of s point at,
// in the order of first use, with the install namespace of the first
// component that installs each (for rendering).
func Charts(s *spec.PackageSpec) []PublishedChart {
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
	Ref spec.ChartRef
	// Namespace is the install namespace of the first component that
	// installs the chart, "" when none sets one.
	Namespace string
}
