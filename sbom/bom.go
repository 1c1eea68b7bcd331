package sbom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/Masterminds/semver/v3"

	"kbuild.dev/kbuild/spec"
)

// SchemaURL is the JSON schema of the BOMs this package writes: CycloneDX
// 1.6.
const SchemaURL = "http://cyclonedx.org/schema/bom-1.6.schema.json"

// Property names kbuild sets on components.
const (
	PropBuild          = "kbuild:build"
	PropRecipe         = "kbuild:recipe"
	PropRecipeDigest   = "kbuild:recipeDigest"
	PropCommit         = "kbuild:commit"
	PropBuilder        = "kbuild:builder"
	PropChartManifest  = "kbuild:chart:manifest"
	PropImagePinned    = "kbuild:image:pinned"
	PropSourceName     = "kbuild:source:name"
	PropSourceKind     = "kbuild:source:kind"
	PropSourceOrigin   = "kbuild:source:origin"
	PropRepositoryKind = "kbuild:repository"
)

// ImageContents lists what is inside a container image, as a CycloneDX
// BOM whose metadata.component is the image. It is the seam for Trivy (see
// Trivy.ImageBOM); tests may pass canned BOMs. ImageBOM is called for
// several images at once.
type ImageContents interface {
	ImageBOM(ctx context.Context, ref string) (*cdx.BOM, error)
}

var _ ImageContents = (*Trivy)(nil)

// Option configures ForBuild and ForRepository.
type Option func(*config)

type config struct {
	timestamp time.Time
	contents  ImageContents
	tools     []cdx.Component
}

// WithTimestamp sets metadata.timestamp (UTC, whole seconds). Pass the time
// of SOURCE_DATE_EPOCH or the index's generated time. Default: no
// timestamp, so that the BOM depends on its inputs only.
func WithTimestamp(t time.Time) Option {
	return func(c *config) { c.timestamp = t }
}

// WithImageContents nests the contents of every image pinned by digest
// under its component, as g lists them (one call per distinct image).
// Default: images are listed without their contents.
func WithImageContents(g ImageContents) Option {
	return func(c *config) { c.contents = g }
}

// WithTool lists a tool in metadata.tools, for example kbuild and its
// version. Default: only the tools that WithImageContents reports.
func WithTool(name, version string) Option {
	return func(c *config) {
		c.tools = append(c.tools, cdx.Component{Type: cdx.ComponentTypeApplication, Name: name, Version: version})
	}
}

// ForRepository returns the BOM of a repository named name (its index URL
// or path) holding builds: metadata.component is the repository and
// depends on every package. Builds may come in any order; one
// name@version build N may appear once.
func ForRepository(ctx context.Context, name string, builds []Build, opts ...Option) (*cdx.BOM, error) {
	if name == "" {
		return nil, errors.New("sbom: empty repository name; pass the index URL or path")
	}
	a, err := assemble(ctx, builds, opts)
	if err != nil {
		return nil, err
	}
	root := cdx.Component{
		BOMRef:     "repository:" + name,
		Type:       cdx.ComponentTypeData,
		Name:       name,
		Properties: &[]cdx.Property{{Name: PropRepositoryKind, Value: "kubepkg.dev/RepositoryIndex"}},
	}
	var pkgs []string
	for _, p := range a.packages {
		pkgs = append(pkgs, p.ref)
	}
	a.depend(root.BOMRef, pkgs...)
	return a.bom(root)
}

// ForBuild returns the BOM of one build: metadata.component is the package
// and the components are its charts, images and upstream sources.
func ForBuild(ctx context.Context, b Build, opts ...Option) (*cdx.BOM, error) {
	a, err := assemble(ctx, []Build{b}, opts)
	if err != nil {
		return nil, err
	}
	ref := a.packages[0].ref
	root := *a.comps[ref]
	delete(a.comps, ref)
	return a.bom(root)
}

// Marshal encodes bom as compact JSON (no indentation) with a final
// newline, without HTML escaping, as kbuild writes .cdx.json files: a
// site holds one per version, and indentation was a fifth of each
// (jq . shows one indented).
func Marshal(bom *cdx.BOM) ([]byte, error) {
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(false).SetEscapeHTML(false)
	if err := enc.Encode(bom); err != nil {
		return nil, fmt.Errorf("encoding CycloneDX JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// assembly is a BOM being put together.
type assembly struct {
	cfg      config
	comps    map[string]*cdx.Component // top-level components by bom-ref
	deps     map[string]map[string]bool
	packages []assembledPackage
	tools    []cdx.Component
}

type assembledPackage struct {
	b      *Build
	ref    string
	digest string
	semver *semver.Version // nil when the version is not semver
}

func assemble(ctx context.Context, builds []Build, opts []Option) (*assembly, error) {
	a := &assembly{comps: map[string]*cdx.Component{}, deps: map[string]map[string]bool{}}
	for _, o := range opts {
		o(&a.cfg)
	}
	a.tools = append(a.tools, a.cfg.tools...)
	seen := map[string]bool{}
	for i := range builds {
		b := &builds[i]
		if b.Name == "" || b.Spec.Version == "" {
			return nil, fmt.Errorf("sbom: build %d of %d has no package name or version; expected both", i+1, len(builds))
		}
		if seen[b.key()] {
			return nil, fmt.Errorf("sbom: %s appears twice; expected each name@version build once", b)
		}
		seen[b.key()] = true
		if err := a.addBuild(b); err != nil {
			return nil, err
		}
	}
	sort.Slice(a.packages, func(i, j int) bool { return a.packages[i].ref < a.packages[j].ref })
	if err := a.linkRequirements(); err != nil {
		return nil, err
	}
	if a.cfg.contents != nil {
		if err := a.addImageContents(ctx); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (a *assembly) depend(from string, to ...string) {
	m := a.deps[from]
	if m == nil {
		m = map[string]bool{}
		a.deps[from] = m
	}
	for _, t := range to {
		if t != from {
			m[t] = true
		}
	}
}

// add records c unless a component with its bom-ref is already there (an
// image several packages run).
func (a *assembly) add(c cdx.Component) {
	if _, ok := a.comps[c.BOMRef]; !ok {
		a.comps[c.BOMRef] = &c
	}
}

func (a *assembly) addBuild(b *Build) error {
	digest, err := b.specDigest()
	if err != nil {
		return err
	}
	ref := "package:" + b.key()
	p := assembledPackage{b: b, ref: ref, digest: digest}
	if v, err := semver.StrictNewVersion(b.Spec.Version); err == nil {
		p.semver = v
	}
	a.packages = append(a.packages, p)

	pc, err := packageComponent(b, ref, digest)
	if err != nil {
		return err
	}
	a.add(pc)
	a.depend(ref)

	manifests := map[[2]string]string{}
	if b.Info != nil {
		for _, c := range b.Info.Charts {
			manifests[[2]string{c.Name, c.Digest}] = c.Manifest
		}
	}
	charts := b.charts()
	if b.Info != nil {
		// Charts packed but installed by no component still shipped.
		have := map[[2]string]bool{}
		for _, c := range charts {
			have[[2]string{c.Name, c.Digest}] = true
		}
		for _, bc := range b.Info.Charts {
			if have[[2]string{bc.Name, bc.Digest}] {
				continue
			}
			cr, err := chartRefFromBuilt(bc)
			if err != nil {
				return fmt.Errorf("%s: %w", b, err)
			}
			charts = append(charts, cr)
		}
	}
	for _, cr := range charts {
		c, err := chartComponent(cr, manifests[[2]string{cr.Name, cr.Digest}])
		if err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
		a.add(c)
		a.depend(ref, c.BOMRef)
	}
	for _, img := range b.Spec.Images {
		c, err := imageComponent(img)
		if err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
		a.add(c)
		a.depend(ref, c.BOMRef)
	}
	if b.Info != nil {
		for _, s := range b.Info.Sources {
			c, err := sourceComponent(b, s)
			if err != nil {
				return fmt.Errorf("%s: source %s: %w", b, s.Name, err)
			}
			if _, dup := a.comps[c.BOMRef]; dup {
				return fmt.Errorf("%s: source %s is listed twice in its BuildInfo; expected unique source names", b, s.Name)
			}
			a.add(c)
			a.depend(ref, c.BOMRef)
		}
	}
	return nil
}

// linkRequirements makes each package depend on the packages its variants
// require, when they are part of the BOM: the newest build whose version
// satisfies the requirement's constraint (any version when it has none).
func (a *assembly) linkRequirements() error {
	byName := map[string][]assembledPackage{}
	for _, p := range a.packages {
		byName[p.b.Name] = append(byName[p.b.Name], p)
	}
	for _, p := range a.packages {
		for _, v := range p.b.Spec.Variants {
			for _, r := range v.Requires {
				cands := byName[r.Package]
				if r.Package == "" || len(cands) == 0 {
					continue
				}
				var c *semver.Constraints
				if r.Version != "" {
					var err error
					c, err = semver.NewConstraint(r.Version)
					if err != nil {
						return fmt.Errorf("%s: variant %q requires %s version %q: %w; expected a semver constraint such as \">=1.2 <2\"", p.b, v.Name, r.Package, r.Version, err)
					}
				}
				var best *assembledPackage
				for i := range cands {
					q := &cands[i]
					if c != nil && (q.semver == nil || !c.Check(q.semver)) {
						continue
					}
					if best == nil || newer(q, best) {
						best = q
					}
				}
				if best != nil {
					a.depend(p.ref, best.ref)
				}
			}
		}
	}
	return nil
}

// newer reports whether p is a newer build than q: semver precedence, then
// the higher build number.
func newer(p, q *assembledPackage) bool {
	switch {
	case p.semver != nil && q.semver != nil:
		if c := p.semver.Compare(q.semver); c != 0 {
			return c > 0
		}
	case p.semver != nil:
		return true
	case q.semver != nil:
		return false
	default:
		if p.b.Spec.Version != q.b.Spec.Version {
			return p.b.Spec.Version > q.b.Spec.Version
		}
	}
	return p.b.Spec.Build > q.b.Spec.Build
}

// bom returns the finished BOM with root as metadata.component.
func (a *assembly) bom(root cdx.Component) (*cdx.BOM, error) {
	var digests []string
	for _, p := range a.packages {
		digests = append(digests, p.digest)
	}
	bom := &cdx.BOM{
		JSONSchema:   SchemaURL,
		BOMFormat:    cdx.BOMFormat,
		SpecVersion:  cdx.SpecVersion1_6,
		SerialNumber: serialNumber(digests),
		Version:      1,
		Metadata:     &cdx.Metadata{Component: &root},
	}
	if !a.cfg.timestamp.IsZero() {
		bom.Metadata.Timestamp = a.cfg.timestamp.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	if tools := uniqueTools(a.tools); len(tools) > 0 {
		bom.Metadata.Tools = &cdx.ToolsChoice{Components: &tools}
	}
	comps := make([]cdx.Component, 0, len(a.comps))
	for _, c := range a.comps {
		comps = append(comps, *c)
	}
	sortComponents(comps)
	if len(comps) > 0 {
		bom.Components = &comps
	}
	refs := map[string]bool{}
	if err := collectRefs(root, refs); err != nil {
		return nil, err
	}
	for _, c := range comps {
		if err := collectRefs(c, refs); err != nil {
			return nil, err
		}
	}
	var deps []cdx.Dependency
	for from, to := range a.deps {
		if !refs[from] {
			continue // not in this BOM
		}
		d := cdx.Dependency{Ref: from}
		list := make([]string, 0, len(to))
		for t := range to {
			if refs[t] {
				list = append(list, t)
			}
		}
		sort.Strings(list)
		d.Dependencies = &list
		deps = append(deps, d)
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].Ref < deps[j].Ref })
	if len(deps) > 0 {
		bom.Dependencies = &deps
	}
	return bom, nil
}

// collectRefs adds the bom-refs of c and its nested components to seen,
// refusing duplicates.
func collectRefs(c cdx.Component, seen map[string]bool) error {
	if c.BOMRef != "" {
		if seen[c.BOMRef] {
			return fmt.Errorf("sbom: bom-ref %q is used twice; expected unique bom-refs (this is a kbuild bug, please report it)", c.BOMRef)
		}
		seen[c.BOMRef] = true
	}
	if c.Components != nil {
		for _, n := range *c.Components {
			if err := collectRefs(n, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortComponents sorts components by bom-ref, then type, name and version,
// recursively.
func sortComponents(cs []cdx.Component) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.BOMRef != b.BOMRef {
			return a.BOMRef < b.BOMRef
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Version < b.Version
	})
	for i := range cs {
		if cs[i].Components != nil {
			sortComponents(*cs[i].Components)
		}
	}
}

func uniqueTools(tools []cdx.Component) []cdx.Component {
	seen := map[[3]string]bool{}
	var out []cdx.Component
	for _, t := range tools {
		k := [3]string{t.Group, t.Name, t.Version}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Version < b.Version
	})
	return out
}

func sha256Hash(digest string) (*[]cdx.Hash, error) {
	h, err := sha256Hex(digest)
	if err != nil {
		return nil, err
	}
	return &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: h}}, nil
}

// props returns the non-empty name/value pairs sorted by name, or nil.
func props(kv ...string) *[]cdx.Property {
	var ps []cdx.Property
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			ps = append(ps, cdx.Property{Name: kv[i], Value: kv[i+1]})
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sortProperties(ps)
	return &ps
}

func sortProperties(ps []cdx.Property) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Name != ps[j].Name {
			return ps[i].Name < ps[j].Name
		}
		return ps[i].Value < ps[j].Value
	})
}

func packageComponent(b *Build, ref, digest string) (cdx.Component, error) {
	hashes, err := sha256Hash(digest)
	if err != nil {
		return cdx.Component{}, fmt.Errorf("%s: spec %w", b, err)
	}
	c := cdx.Component{
		BOMRef:      ref,
		Type:        cdx.ComponentTypeApplication,
		Name:        b.Name,
		Version:     b.Spec.Version,
		Description: b.Description,
		Hashes:      hashes,
	}
	if b.Home != "" {
		c.ExternalReferences = &[]cdx.ExternalReference{{URL: b.Home, Type: cdx.ERTypeWebsite}}
	}
	kv := []string{PropBuild, strconv.Itoa(b.Spec.Build)}
	if i := b.Info; i != nil {
		kv = append(kv, PropRecipe, i.Recipe, PropRecipeDigest, i.RecipeDigest, PropCommit, i.Commit, PropBuilder, i.Builder)
	}
	c.Properties = props(kv...)
	return c, nil
}

// chartRefFromBuilt turns a BuildInfo chart, Ref oci://registry/repo/name:tag,
// into the chart reference a component would carry.
func chartRefFromBuilt(bc spec.BuiltChart) (spec.ChartRef, error) {
	ref, isOCI := strings.CutPrefix(bc.Ref, "oci://")
	r, err := spec.ParseImageRef(ref)
	if !isOCI || err != nil || r.Tag == "" || r.Digest != "" {
		return spec.ChartRef{}, fmt.Errorf("built chart %s: ref %q: expected oci://registry/repository/name:tag", bc.Name, bc.Ref)
	}
	return spec.ChartRef{
		Repository: "oci://" + path.Dir(r.Name()),
		Name:       path.Base(r.Repository),
		Version:    strings.ReplaceAll(r.Tag, "_", "+"),
		Digest:     bc.Digest,
	}, nil
}

func chartComponent(cr spec.ChartRef, manifest string) (cdx.Component, error) {
	hashes, err := sha256Hash(cr.Digest)
	if err != nil {
		return cdx.Component{}, fmt.Errorf("chart %s %s: %w", cr.Name, cr.Version, err)
	}
	if cr.Name == "" || cr.Repository == "" {
		return cdx.Component{}, fmt.Errorf("chart %q in %q: expected a repository and a name", cr.Name, cr.Repository)
	}
	repo := strings.TrimSuffix(cr.Repository, "/")
	tag := ociTag(cr.Version)
	purl := ociPURL(strings.TrimPrefix(repo, "oci://")+"/"+cr.Name, cr.Digest, tag)
	c := cdx.Component{
		BOMRef:     ociRef("chart", purl),
		Type:       cdx.ComponentTypeApplication,
		Name:       cr.Name,
		Version:    cr.Version,
		PackageURL: purl,
		Hashes:     hashes,
		ExternalReferences: &[]cdx.ExternalReference{{
			URL:  repo + "/" + cr.Name + ":" + tag,
			Type: cdx.ERTypeDistribution,
		}},
		Properties: props(PropChartManifest, manifest),
	}
	return c, nil
}

func imageComponent(ref string) (cdx.Component, error) {
	r, err := parseImageRef(ref)
	if err != nil {
		return cdx.Component{}, err
	}
	purl := ociPURL(r.Name(), r.Digest, r.Tag)
	c := cdx.Component{
		BOMRef:     ociRef("image", purl),
		Type:       cdx.ComponentTypeContainer,
		Name:       r.Name(),
		Version:    r.Tag,
		PackageURL: purl,
	}
	if r.Digest != "" {
		c.Hashes, _ = sha256Hash(r.Digest)
	} else {
		c.Properties = props(PropImagePinned, "false")
	}
	return c, nil
}

func sourceComponent(b *Build, s spec.ResolvedSource) (cdx.Component, error) {
	if s.Name == "" {
		return cdx.Component{}, errors.New("empty source name in BuildInfo")
	}
	hashes, err := sha256Hash(s.Digest)
	if err != nil {
		return cdx.Component{}, err
	}
	c := cdx.Component{
		BOMRef:     "source:" + b.key() + "/" + s.Name,
		Type:       cdx.ComponentTypeData,
		Name:       s.Origin,
		Hashes:     hashes,
		Properties: props(PropSourceName, s.Name, PropSourceKind, s.Kind, PropSourceOrigin, s.Origin),
	}
	ext := func(u string, t cdx.ExternalReferenceType) {
		c.ExternalReferences = &[]cdx.ExternalReference{{URL: u, Type: t}}
	}
	switch s.Kind {
	case "url":
		c.Type = cdx.ComponentTypeFile
		if u, err := url.Parse(s.Origin); err == nil && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
			c.Name = path.Base(u.Path)
		}
		ext(s.Origin, cdx.ERTypeDistribution)
	case "chart":
		// Origin is repository/name@version.
		c.Type = cdx.ComponentTypeFile
		if at := strings.LastIndexByte(s.Origin, '@'); at > 0 {
			repoName := s.Origin[:at]
			c.Version = s.Origin[at+1:]
			c.Name = path.Base(repoName)
			ext(strings.TrimSuffix(repoName, "/"+c.Name), cdx.ERTypeDistribution)
		} else {
			ext(s.Origin, cdx.ERTypeDistribution)
		}
	case "git":
		// Origin is URL@commit, or URL@commit:path for a subtree.
		c.Type = cdx.ComponentTypeFile
		repoURL := s.Origin
		if at := strings.LastIndexByte(s.Origin, '@'); at > 0 {
			commit, _, _ := strings.Cut(s.Origin[at+1:], ":")
			if len(commit) == 40 && strings.Trim(commit, "0123456789abcdef") == "" {
				repoURL, c.Version = s.Origin[:at], commit
			}
		}
		if u, err := url.Parse(repoURL); err == nil && u.Path != "" {
			c.Name = strings.TrimSuffix(path.Base(u.Path), ".git")
		}
		ext(repoURL, cdx.ERTypeVCS)
	case "image":
		r, err := parseImageRef(s.Origin)
		if err != nil {
			return cdx.Component{}, err
		}
		c.Type = cdx.ComponentTypeContainer
		c.Name, c.Version = r.Name(), r.Tag
		c.PackageURL = ociPURL(r.Name(), r.Digest, r.Tag)
	}
	if c.Name == "" {
		c.Name = s.Name
	}
	return c, nil
}
