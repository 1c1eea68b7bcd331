package qualify

import (
	"os"
	"path"
	"path/filepath"
	"slices"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
)

// Untested returns the builds of the index that evidenceDir holds no
// evidence for (no *.intoto.json under
// evidenceDir/<name>-<version>-<build>/): what the qualify workflow tests
// after a publish. A package build a release set of the index pins is
// left to its set, which tests it with the other members (the Foreman
// stack's members need one another to become ready). Sorted by name,
// then in the index's order of versions and builds.
func Untested(x *index.RepositoryIndex, evidenceDir string) ([]evidence.Target, error) {
	var all []evidence.Target
	pinned := map[evidence.Target]bool{}
	names := make([]string, 0, len(x.Packages))
	for name := range x.Packages {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range x.Packages[name].Versions {
			all = append(all, evidence.Target{Package: name, Version: v.Version, Build: v.Build})
			members, isSet, err := index.SetMembers(&v.Spec)
			if err != nil || !isSet {
				continue
			}
			for _, m := range members {
				pinned[evidence.Target{Package: m.Package, Version: m.Version, Build: m.Build}] = true
			}
		}
	}
	var out []evidence.Target
	for _, t := range all {
		if pinned[t] {
			continue
		}
		has, err := hasEvidence(evidenceDir, t)
		if err != nil {
			return nil, err
		}
		if !has {
			out = append(out, t)
		}
	}
	return out, nil
}

func hasEvidence(dir string, t evidence.Target) (bool, error) {
	sub := path.Dir(sitelayout.EvidenceFile(t.Package, t.Version, t.Build, "x"))
	files, err := filepath.Glob(filepath.Join(dir, filepath.Base(sub), "*.intoto.json"))
	if err != nil {
		return false, err
	}
	if len(files) > 0 {
		return true, nil
	}
	if _, err := os.Stat(dir); err != nil && !os.IsNotExist(err) {
		return false, err
	}
	return false, nil
}
