package bump

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// ErrSetNeedsIndex is wrapped when a release set is bumped without the
// published index: a set is bumped to builds its members have
// published, so the published index must be given.
var ErrSetNeedsIndex = errors.New("a release set is bumped to its members' published builds")

// isSet reports whether r is a release set (some requirement pins an
// exact build), with its members.
func isSet(r *recipe.Recipe) ([]index.SetMember, bool, error) {
	ps := spec.PackageSpec{Version: spec.CanonicalVersion(r.Spec.Version), Build: r.Spec.Build, Variants: r.Spec.Package.Variants}
	return index.SetMembers(&ps)
}

// planSet moves the pins of the release set in dir to the builds its
// members' recipes (the recipe directories beside dir) are at, once the
// published index holds every one of them. Until then nothing changes
// and Result.Waiting names the builds not published yet. The set's
// version follows its members when they all share one version, as the
// set's did; otherwise the version stays and the build goes up by one.
func (b *Bumper) planSet(l *builder.Loaded, before []byte, members []index.SetMember) (*plan, error) {
	r, dir := l.Recipe, l.Dir
	res := &Result{Dir: dir, File: l.File, Package: r.Metadata.Name, From: r.Spec.Version, To: r.Spec.Version, Build: r.Spec.Build, Set: true}
	pl := &plan{res: res, before: before, after: before}
	if b.Index == nil {
		return nil, fmt.Errorf("recipe %s is a release set: %w", dir, ErrSetNeedsIndex)
	}
	recipes, err := siblingRecipes(dir)
	if err != nil {
		return nil, err
	}
	var next []index.SetMember
	moved := false
	for _, m := range members {
		to, ok := recipes[m.Package]
		if !ok {
			return nil, fmt.Errorf("recipe %s: release set member %s has no recipe beside it in %s; a set is bumped to the builds its members' recipes are at", dir, m.Package, filepath.Dir(dir))
		}
		to.Digest = ""
		m.Digest = ""
		next = append(next, to)
		if to == m {
			continue
		}
		if older(to, m) {
			return nil, fmt.Errorf("recipe %s: release set member %s: its recipe is at %s build %d, older than the pin %s build %d; a set bump never moves a pin back (edit the set by hand if that is meant)", dir, m.Package, to.Version, to.Build, m.Version, m.Build)
		}
		moved = true
		if b.Index.Find(to.Package, to.Version, to.Build) == nil {
			res.Waiting = append(res.Waiting, to.String())
		}
	}
	if !moved || len(res.Waiting) > 0 {
		return pl, nil
	}

	var doc yaml.Node
	if err := yaml.Unmarshal(before, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: %v", l.File, err)
	}
	e := &editor{file: l.File, root: doc.Content[0]}
	// The set's version and build.
	setVersion := spec.CanonicalVersion(r.Spec.Version)
	oldCommon, newCommon := commonVersion(members), commonVersion(next)
	res.Build = r.Spec.Build + 1
	if oldCommon == setVersion && newCommon != "" && newCommon != setVersion {
		res.To, res.Build = versionLike(r.Spec.Version, newCommon), 1
	}
	e.set(res.From, res.To, "spec", "version")
	e.set(strconv.Itoa(r.Spec.Build), strconv.Itoa(res.Build), "spec", "build")
	// Each pin and each build capability.
	to := map[string]index.SetMember{}
	for i, m := range members {
		to[m.Package] = next[i]
		if next[i] != m {
			res.Members = append(res.Members, fmt.Sprintf("%s %s build %d -> %s build %d", m.Package, m.Version, m.Build, next[i].Version, next[i].Build))
		}
	}
	caps := map[string]string{}
	for i, m := range members {
		caps[buildCapability(m)] = buildCapability(next[i])
	}
	if variants := recipe.MappingPath(e.root, "spec", "package", "variants"); variants != nil && variants.Kind == yaml.SequenceNode {
		for _, v := range variants.Content {
			reqs := recipe.MappingPath(v, "requires")
			if reqs == nil || reqs.Kind != yaml.SequenceNode {
				continue
			}
			for _, rq := range reqs.Content {
				if p := recipe.MappingPath(rq, "package"); p != nil {
					if n := recipe.MappingPath(rq, "version"); n != nil && n.Kind == yaml.ScalarNode {
						if m, ok := to[p.Value]; ok {
							e.edit(n, "spec.package.variants.requires", index.ExactBuild(m.Version, m.Build))
						}
					}
				}
				if c := recipe.MappingPath(rq, "capability"); c != nil && c.Kind == yaml.ScalarNode {
					if nc, ok := caps[c.Value]; ok {
						e.edit(c, "spec.package.variants.requires", nc)
					}
				}
			}
		}
	}
	self := buildCapability(index.SetMember{Package: r.Metadata.Name, Version: r.Spec.Version, Build: r.Spec.Build})
	if p := recipe.MappingPath(e.root, "spec", "package", "provides"); p != nil && p.Kind == yaml.SequenceNode {
		for _, it := range p.Content {
			if it.Kind == yaml.ScalarNode && it.Value == self {
				e.edit(it, "spec.package.provides", buildCapability(index.SetMember{Package: r.Metadata.Name, Version: res.To, Build: res.Build}))
			}
		}
	}
	if e.err != nil {
		return nil, e.err
	}
	after, err := applyEdits(before, e.edits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.File, err)
	}
	pl.after = after
	res.Changes = e.changes
	res.Changed = true
	return pl, nil
}

// buildCapability is the capability a build provides:
// build:NAME@VERSION+build.N.
func buildCapability(m index.SetMember) string {
	return fmt.Sprintf("build:%s@%s+build.%d", m.Package, m.Version, m.Build)
}

// commonVersion is the version every member has, or "".
func commonVersion(ms []index.SetMember) string {
	if len(ms) == 0 {
		return ""
	}
	for _, m := range ms[1:] {
		if m.Version != ms[0].Version {
			return ""
		}
	}
	return ms[0].Version
}

// siblingRecipes loads the recipes beside dir (the directories of its
// parent holding a recipe.yaml), by package name, each as the build it
// is at.
func siblingRecipes(dir string) (map[string]index.SetMember, error) {
	parent := filepath.Dir(filepath.Clean(dir))
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	out := map[string]index.SetMember{}
	for _, en := range entries {
		d := filepath.Join(parent, en.Name())
		if !en.IsDir() || d == filepath.Clean(dir) {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, builder.RecipeFile)); err != nil {
			continue
		}
		l, err := builder.Load(d)
		if err != nil {
			return nil, err
		}
		if l.Recipe == nil {
			return nil, fmt.Errorf("%s: %w", d, l.Err())
		}
		out[l.Recipe.Metadata.Name] = index.SetMember{Package: l.Recipe.Metadata.Name, Version: spec.CanonicalVersion(l.Recipe.Spec.Version), Build: l.Recipe.Spec.Build}
	}
	return out, nil
}

// older reports whether build a comes before build b of one package.
func older(a, b index.SetMember) bool {
	va, ea := spec.ParseVersion(a.Version)
	vb, eb := spec.ParseVersion(b.Version)
	if ea != nil || eb != nil || va.Equal(vb) {
		return a.Version == b.Version && a.Build < b.Build
	}
	return va.LessThan(vb)
}
