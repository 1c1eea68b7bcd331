package recipe

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"kbuild.dev/kbuild/spec"
)

var (
	dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	hex40        = regexp.MustCompile(`^[0-9a-f]{40}$`)
	pluginName   = regexp.MustCompile(`^[a-z0-9][-a-z0-9_.]*$`)
	crdName      = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
)

// APIVersions are the recipe apiVersions kbuild reads; they share one schema.
var APIVersions = []string{"kubepkg.dev/v1", "kubepkg.dev/v1beta1", "kubepkg.dev/v1alpha1"}

// ArchiveExtensions are the file name endings kbuild unpacks.
var ArchiveExtensions = []string{".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar", ".zip"}

// IsArchive reports whether a URL or file name ends in an archive extension.
func IsArchive(name string) bool {
	name = strings.ToLower(name)
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	for _, ext := range ArchiveExtensions {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Validate makes every check on r that needs no I/O and returns the
// problems found, errors and warnings, sorted by line. pos may be nil.
func Validate(r *Recipe, pos Positions) Problems {
	v := &validator{pos: pos}
	v.metadata(r)
	v.spec(r)
	sort.SliceStable(v.probs, func(i, j int) bool { return v.probs[i].Line < v.probs[j].Line })
	return v.probs
}

type validator struct {
	pos   Positions
	probs Problems
}

func (v *validator) report(sev Severity, field, format string, args ...any) {
	v.probs = append(v.probs, Problem{Severity: sev, Field: field, Line: v.pos.Line(field), Message: fmt.Sprintf(format, args...)})
}

func (v *validator) errorf(field, format string, args ...any) {
	v.report(Error, field, format, args...)
}

func (v *validator) warnf(field, format string, args ...any) {
	v.report(Warning, field, format, args...)
}

func (v *validator) metadata(r *Recipe) {
	ok := false
	for _, a := range APIVersions {
		ok = ok || r.APIVersion == a
	}
	if !ok {
		v.errorf("apiVersion", "expected one of %s, got %s", strings.Join(APIVersions, ", "), Quote(r.APIVersion))
	}
	if r.Kind != Kind {
		v.errorf("kind", "expected %q, got %s", Kind, Quote(r.Kind))
	}
	v.label("metadata.name", r.Metadata.Name, "package name")
	if r.Description() == "" {
		v.warnf("metadata.annotations", "no description; add the annotation %s so the index and catalog can show one", AnnotationDescription)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Metadata.Annotations)) {
		if err := CheckAnnotation(k, r.Metadata.Annotations[k]); err != nil {
			v.errorf("metadata.annotations."+k, "%v", err)
		}
	}
}

// MaxAnnotationSize bounds an annotation's value: the index carries it and
// the catalog shows it on every page that lists the package.
const MaxAnnotationSize = 1024

// CheckAnnotation checks an annotation as the index and catalog need it:
// UTF-8, one line of printable characters, without control characters or
// invisible formatting ones (bidirectional overrides and isolates such as
// U+202E and U+2066, zero-width ones such as U+200B: text that displays as
// something other than what it is), at most MaxAnnotationSize bytes.
func CheckAnnotation(key, value string) error {
	name := cut(key)
	switch {
	case len(value) > MaxAnnotationSize:
		return fmt.Errorf("annotation %s is %d bytes; at most %d (the catalog shows it on every page that lists the package)", Quote(name), len(value), MaxAnnotationSize)
	case !utf8.ValidString(key) || !utf8.ValidString(value):
		return fmt.Errorf("annotation %s is not UTF-8", Quote(name))
	}
	for _, s := range []string{key, value} {
		for i, r := range s {
			if r != ' ' && !unicode.IsPrint(r) {
				what := "a control character"
				if unicode.Is(unicode.Cf, r) {
					what = "an invisible formatting character (bidirectional or zero-width), which makes text display as something it is not"
				}
				return fmt.Errorf("annotation %s holds %U at byte %d, %s; use one line of printable text", Quote(name), r, i, what)
			}
		}
	}
	return nil
}

func (v *validator) label(field, s, what string) {
	switch {
	case s == "":
		v.errorf(field, "%s is required", what)
	case len(s) > 63 || !dns1123Label.MatchString(s):
		v.errorf(field, "%s %s is not a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters, starting and ending with a letter or digit)", what, Quote(s))
	}
}

func (v *validator) spec(r *Recipe) {
	s := &r.Spec
	if s.Version == "" {
		v.errorf("spec.version", "version is required (the upstream version, exact semver such as 1.9.0)")
	} else if _, err := semver.StrictNewVersion(strings.TrimPrefix(s.Version, "v")); err != nil {
		v.errorf("spec.version", "%s is not an exact semver version (such as 1.9.0): %s", Quote(s.Version), cut(err.Error()))
	}
	if s.Build < 1 {
		v.errorf("spec.build", "build must be 1 or more, got %d; it numbers our packagings of one upstream version (kubepkg takes a missing build as 0; kbuild publishes builds from 1: add build: 1)", s.Build)
	}
	if len(s.Verify) > 0 {
		v.warnf("spec.verify", "kbuild does not evaluate verify; every source is pinned by its sha256 instead")
	}
	for _, n := range slices.Sorted(maps.Keys(s.Sources)) {
		v.source(join("spec.sources", n), n, s.Sources[n])
	}
	for _, n := range slices.Sorted(maps.Keys(s.Charts)) {
		v.chart(join("spec.charts", n), n, s.Charts[n], s.Sources)
	}
	v.pkg(r)
}

// source checks one source at field in named steps: it sets exactly one
// kind (sourceKinds), sets only the fields of its kind (sourceFields), and
// the fields of its kind are well formed (urlSource, chartSource,
// gitSource, and the dir, plugin and image checks).
func (v *validator) source(field, n string, src Source) {
	kinds := sourceKinds(src)
	if len(kinds) != 1 {
		v.errorf(field, "a source sets exactly one of url, chart, dir, plugin, git or image; found %d (%s)", len(kinds), strings.Join(kinds, ", "))
		return
	}
	kind := kinds[0]
	v.sourceFields(field, kind, src)
	switch kind {
	case "url":
		v.urlSource(field, src)
	case "chart":
		v.chartSource(field, src.Chart)
	case "dir":
		v.localPath(field+".dir", src.Dir)
	case "plugin":
		if !pluginName.MatchString(src.Plugin) {
			v.errorf(field+".plugin", "%s is not a plugin name (lower-case letters, digits, '-', '_', '.')", Quote(src.Plugin))
		}
	case "git":
		v.gitSource(field, src)
	case "image":
		v.image(field+".image.ref", src.Image.Ref)
	}
}

// sourceKinds lists the kinds of source src sets, in a fixed order.
func sourceKinds(src Source) []string {
	kinds := []string{}
	if src.URL != "" {
		kinds = append(kinds, "url")
	}
	if src.Chart != nil {
		kinds = append(kinds, "chart")
	}
	if src.Dir != "" {
		kinds = append(kinds, "dir")
	}
	if src.Plugin != "" {
		kinds = append(kinds, "plugin")
	}
	if src.Git != nil {
		kinds = append(kinds, "git")
	}
	if src.Image != nil {
		kinds = append(kinds, "image")
	}
	return kinds
}

// sourceFields refuses the fields that belong to another kind of source
// than kind, and a negative strip.
func (v *validator) sourceFields(field, kind string, src Source) {
	if src.SHA256 != "" && kind != "url" {
		v.errorf(field+".sha256", "sha256 belongs to url sources; %s sources are pinned by their own fields", kind)
	}
	if src.Path != "" && kind != "url" && kind != "git" {
		v.errorf(field+".path", "path picks a file inside a url archive or a git tree; it has no meaning on a %s source", kind)
	}
	if src.Strip != 0 && kind != "url" {
		v.errorf(field+".strip", "strip applies to url archives only")
	}
	if src.Strip < 0 {
		v.errorf(field+".strip", "strip must not be negative")
	}
	if len(src.With) > 0 && kind != "plugin" {
		v.errorf(field+".with", "with passes input to a plugin; this is a %s source", kind)
	}
}

// urlSource checks a url source: an http(s) or file URL, pinned by
// sha256, with a path only inside an archive.
func (v *validator) urlSource(field string, src Source) {
	if !strings.HasPrefix(src.URL, "https://") && !strings.HasPrefix(src.URL, "http://") && !strings.HasPrefix(src.URL, "file://") {
		v.errorf(field+".url", "%s is not an http(s) or file URL", Quote(src.URL))
	}
	if _, err := spec.ParseDigest("sha256:" + strings.TrimPrefix(src.SHA256, "sha256:")); err != nil {
		if src.SHA256 == "" {
			v.errorf(field+".sha256", "sha256 is required: pin the file by its digest (run: kbuild fetch to print it)")
		} else {
			v.errorf(field+".sha256", "expected 64 lower-case hex digits (optionally prefixed sha256:), got %s", Quote(src.SHA256))
		}
	}
	if src.Path != "" && !IsArchive(src.URL) {
		v.errorf(field+".path", "path is set but %s is not an archive (%s)", Quote(src.URL), strings.Join(ArchiveExtensions, ", "))
	}
	if src.Path != "" {
		v.localPath(field+".path", src.Path)
	}
}

// chartSource checks a chart source: an https:// or oci:// repository, a
// name, an exact version and the archive's digest.
func (v *validator) chartSource(field string, c *ChartSource) {
	if !strings.HasPrefix(c.Repository, "https://") && !strings.HasPrefix(c.Repository, "http://") && !strings.HasPrefix(c.Repository, "oci://") {
		v.errorf(field+".chart.repository", "expected an https:// or oci:// repository, got %s", Quote(c.Repository))
	}
	if c.Name == "" {
		v.errorf(field+".chart.name", "chart name is required")
	}
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(c.Version, "v")); err != nil {
		v.errorf(field+".chart.version", "chart version must be exact, got %s", Quote(c.Version))
	}
	if _, err := spec.ParseDigest(c.Digest); err != nil {
		v.errorf(field+".chart.digest", "expected sha256:<64 hex> of the chart archive, got %s", Quote(c.Digest))
	}
}

// gitSource checks a git source: a URL, a full commit id, and a path
// only inside git.
func (v *validator) gitSource(field string, src Source) {
	g := src.Git
	if g.URL == "" {
		v.errorf(field+".git.url", "git url is required")
	}
	if !hex40.MatchString(g.Commit) {
		v.errorf(field+".git.commit", "expected a full 40-hex commit id, got %s; branches and tags move, commits do not", Quote(g.Commit))
	}
	if src.Path != "" {
		v.errorf(field+".path", "set path inside git: {path: …}")
	}
	if g.Path != "" {
		v.localPath(field+".git.path", g.Path)
	}
}

// localPath reports paths that are absolute or leave their base directory.
func (v *validator) localPath(field, p string) {
	if p == "" {
		v.errorf(field, "path is empty")
		return
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(path.Clean(p), "../") || path.Clean(p) == ".." {
		v.errorf(field, "%s leaves the recipe directory; use a relative path inside it", Quote(p))
	}
}

// MaxValueKeys bounds the keys and list items a chart's values may set
// (counted through every level): real recipes set tens; a file of
// generated settings belongs in the chart's values.yaml (an overlay).
const MaxValueKeys = 10000

// CountValueKeys counts the keys and list items of v at every level,
// stopping once the count passes limit.
func CountValueKeys(v any, limit int) int {
	n := 0
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if n++; n > limit {
					return
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				if n++; n > limit {
					return
				}
				walk(e)
			}
		}
	}
	walk(v)
	return n
}

func (v *validator) chart(field, n string, c Chart, sources map[string]Source) {
	v.label(field, n, "chart name")
	if CountValueKeys(c.Values, MaxValueKeys) > MaxValueKeys {
		v.errorf(field+".values", "sets more than %d keys and list items, the most a recipe may set; put generated settings in the chart's values.yaml with an overlay", MaxValueKeys)
	}
	if len(c.From) == 0 {
		v.errorf(field+".from", "from is required: name the sources this chart is made of")
	}
	for i, f := range c.From {
		if _, ok := sources[f]; !ok {
			v.errorf(fmt.Sprintf("%s.from[%d]", field, i), "no source named %s (sources: %s)", Quote(f), quoteList(slices.Sorted(maps.Keys(sources))))
		} else if sources[f].Image != nil {
			v.errorf(fmt.Sprintf("%s.from[%d]", field, i), "source %s is an image; charts are made of chart, manifest or file sources", Quote(f))
		}
	}
	if c.Overlay != "" {
		v.localPath(field+".overlay", c.Overlay)
	}
	for i, r := range c.Remove {
		if _, err := path.Match(r, ""); err != nil || strings.HasPrefix(r, "/") || strings.Contains("/"+r+"/", "/../") {
			v.errorf(fmt.Sprintf("%s.remove[%d]", field, i), "%s is not a chart-relative file pattern", Quote(r))
		}
	}
	for i, e := range c.Exclude {
		if e.Kind == "" && e.Name == "" {
			v.errorf(fmt.Sprintf("%s.exclude[%d]", field, i), "an exclude entry needs kind, name or both; an empty one would drop everything")
		}
	}
	for i, p := range c.Patches {
		f := fmt.Sprintf("%s.patches[%d]", field, i)
		forms := 0
		if p.Merge != nil {
			forms++
		}
		if p.Strategic != nil {
			forms++
		}
		if p.JSON6902 != nil {
			forms++
		}
		if forms != 1 {
			v.errorf(f, "a patch sets exactly one of merge, strategic or json6902; found %d", forms)
		}
		if p.Kind == "" && p.Name == "" {
			v.errorf(f, "a patch needs kind, name or both to say what it changes")
		}
		for j, op := range p.JSON6902 {
			of := fmt.Sprintf("%s.json6902[%d]", f, j)
			switch op.Op {
			case "add", "replace", "test":
				if len(op.Value) == 0 {
					v.errorf(of+".value", "op %s needs a value", Quote(op.Op))
				}
			case "remove":
			case "move", "copy":
				if op.From == "" {
					v.errorf(of+".from", "op %s needs from", Quote(op.Op))
				}
			default:
				v.errorf(of+".op", "expected add, remove, replace, move, copy or test, got %s", Quote(op.Op))
			}
			if !strings.HasPrefix(op.Path, "/") {
				v.errorf(of+".path", "a JSON pointer starts with '/', got %s", Quote(op.Path))
			}
		}
	}
	for i, s := range c.Steps {
		if !pluginName.MatchString(s.Plugin) {
			v.errorf(fmt.Sprintf("%s.steps[%d].plugin", field, i), "%s is not a plugin name", Quote(s.Plugin))
		}
	}
}

// pkg checks spec.package in named steps: the fields the build sets
// (pkgBuildFields), the declarations (pkgDeclared), each variant
// (variant), then the variants' dependsOn (variantDependsOn).
func (v *validator) pkg(r *Recipe) {
	p := &r.Spec.Package
	const f = "spec.package"
	v.pkgBuildFields(f, p)
	v.pkgDeclared(f, r)
	v.requiredEmpty(f, p)
	if len(p.Variants) == 0 {
		if !r.Meta() {
			v.errorf(f+".variants", "no variants; add one with a component per chart, or nothing installs the charts")
		}
	}
	variants := map[string]bool{}
	for i, vr := range p.Variants {
		vf := fmt.Sprintf("%s.variants[%d]", f, i)
		if vr.Name != "" && variants[vr.Name] {
			v.errorf(vf+".name", "duplicate variant %s", Quote(vr.Name))
		}
		variants[vr.Name] = true
		v.variant(vf, r, vr)
	}
	v.variantDependsOn(f, r)
}

// pkgBuildFields refuses the fields of spec.package the build sets.
func (v *validator) pkgBuildFields(f string, p *Package) {
	if p.Version != "" {
		v.errorf(f+".version", "package.version comes from spec.version at build time; remove it")
	}
	if p.Build != 0 {
		v.errorf(f+".build", "package.build comes from spec.build at build time; remove it")
	}
	if p.SourceRef != nil {
		v.errorf(f+".sourceRef", "package.sourceRef is set by the build; remove it")
	}
}

// pkgDeclared checks what spec.package declares: rollback and images
// (warnings when missing), each image, CRD name and provides entry.
func (v *validator) pkgDeclared(f string, r *Recipe) {
	p := &r.Spec.Package
	if p.Rollback == nil {
		v.warnf(f, "rollback is not declared; say rollback: {safe: true} or {safe: false} so clusters know whether a downgrade is allowed")
	}
	if len(p.Images) == 0 && !r.Meta() {
		v.warnf(f+".images", "no images declared; list every image the charts run, pinned by digest")
	}
	for i, img := range p.Images {
		v.image(fmt.Sprintf("%s.images[%d]", f, i), img)
	}
	for i, c := range p.CRDs {
		if !crdName.MatchString(c) {
			v.errorf(fmt.Sprintf("%s.crds[%d]", f, i), "%s is not a CRD name (<plural>.<group>, e.g. kubevirts.kubevirt.io)", Quote(c))
		}
	}
	for i, c := range p.Provides {
		if msg := checkProvided(c); msg != "" {
			v.errorf(fmt.Sprintf("%s.provides[%d]", f, i), "%s", msg)
		}
	}
}

// variant checks one variant at field vf: its requirements, its
// components, and that each component's install.dependsOn names a
// component of the variant.
func (v *validator) variant(vf string, r *Recipe, vr spec.Variant) {
	for j, req := range vr.Requires {
		rf := fmt.Sprintf("%s.requires[%d]", vf, j)
		if (req.Package == "") == (req.Capability == "") {
			v.errorf(rf, "a requirement names exactly one of package or capability")
		}
		if req.Version != "" {
			if _, err := semver.NewConstraint(req.Version); err != nil {
				v.errorf(rf+".version", "%s is not a semver constraint: %s", Quote(req.Version), cut(err.Error()))
			}
		}
		if req.Package != "" && req.Package == r.Metadata.Name {
			v.errorf(rf+".package", "a package cannot require itself")
		}
	}
	comps := map[string]bool{}
	for j, c := range vr.Components {
		comps[c.Name] = true
		v.component(fmt.Sprintf("%s.components[%d]", vf, j), r, c)
	}
	for j, c := range vr.Components {
		if c.Install == nil {
			continue
		}
		for k, d := range c.Install.DependsOn {
			if !comps[d] {
				v.errorf(fmt.Sprintf("%s.components[%d].install.dependsOn[%d]", vf, j, k), "no component named %s in this variant", Quote(d))
			}
		}
	}
}

// component checks one component at field cf: the fields a recipe does
// not set, its chart path, its values files and its install options.
func (v *validator) component(cf string, r *Recipe, c spec.Component) {
	if c.Chart != nil {
		v.errorf(cf+".chart", "a recipe's component names its chart with path (a chart key); chart is written by the build")
	}
	if len(c.Libraries) > 0 {
		v.errorf(cf+".libraries", "kbuild publishes each component as a chart, and kubepkg's PackageSource schema allows component libraries only in a package tree; make the library a dependency of the chart instead")
	}
	if len(c.ValuesFiles) > 0 {
		v.errorf(cf+".valuesFiles", "kbuild publishes each component as a chart, and kubepkg's PackageSource schema allows valuesFiles only in a package tree; merge the values into the chart's values instead")
	}
	if _, ok := r.Spec.Charts[c.Path]; !ok {
		v.errorf(cf+".path", "no chart named %s in spec.charts (charts: %s)", Quote(c.Path), quoteList(slices.Sorted(maps.Keys(r.Spec.Charts))))
	}
	for k, vf := range c.ValuesFiles {
		if strings.Contains(vf, "://") {
			v.errorf(fmt.Sprintf("%s.valuesFiles[%d]", cf, k), "%s is a URL; valuesFiles name files inside the chart", Quote(vf))
		} else {
			v.localPath(fmt.Sprintf("%s.valuesFiles[%d]", cf, k), vf)
		}
	}
	if c.Install != nil {
		v.install(cf+".install", c.Install)
	}
}

// install checks a component's install options at field f against the
// values kubepkg's schema allows.
func (v *validator) install(f string, in *spec.Install) {
	switch in.UpgradeCRDs {
	case "", "Skip", "Create", "CreateReplace":
	default:
		v.errorf(f+".upgradeCRDs", "expected Skip, Create or CreateReplace, got %s", Quote(in.UpgradeCRDs))
	}
	switch in.WaitStrategy {
	case "", "poller", "legacy":
	default:
		v.errorf(f+".waitStrategy", "expected poller or legacy (kubepkg's schema allows no other), got %s", Quote(in.WaitStrategy))
	}
	switch in.Phase {
	case "", "PreUpgrade":
	default:
		v.errorf(f+".phase", "expected PreUpgrade or nothing, got %s", Quote(in.Phase))
	}
	if in.Namespace != "" && !dns1123Label.MatchString(in.Namespace) {
		v.errorf(f+".namespace", "%s is not a valid namespace", Quote(in.Namespace))
	}
}

// variantDependsOn checks each variant's dependsOn. kubepkg's resolver
// reads each variants[].dependsOn entry as a requirement of the package
// of that name (requires with only package set), not as a variant.
func (v *validator) variantDependsOn(f string, r *Recipe) {
	for i, vr := range r.Spec.Package.Variants {
		for j, d := range vr.DependsOn {
			df := fmt.Sprintf("%s.variants[%d].dependsOn[%d]", f, i, j)
			switch {
			case d == r.Metadata.Name:
				v.errorf(df, "a package cannot depend on itself")
			case !dns1123Label.MatchString(d) || len(d) > 63:
				v.errorf(df, "%s is not a package name; dependsOn names packages (DNS-1123 labels); for a capability write requires: [{capability: %s}]", Quote(d), Quote(d))
			}
		}
	}
}

// checkProvided returns why c cannot be a provides entry, or "". An entry
// is a package name or a capability <kind>:<value>, as kubepkg accepts
// them (storageclass:default, csi:rbd.csi.ceph.com, …); only api: has a
// checked shape, api:<group>/<version>.
func checkProvided(c string) string {
	kind, value, isCap := strings.Cut(c, ":")
	switch {
	case !isCap:
		if !dns1123Label.MatchString(c) || len(c) > 63 {
			return fmt.Sprintf("%s is neither a package name (a DNS-1123 label) nor a capability <kind>:<value> such as storageclass:default", Quote(c))
		}
	case kind == "api":
		group, version, ok := strings.Cut(value, "/")
		if !ok || group == "" || version == "" || strings.Contains(version, "/") {
			return fmt.Sprintf("capability %s must be api:<group>/<version>, e.g. api:kubevirt.io/v1", Quote(c))
		}
	case kind == "" || value == "" || strings.ContainsAny(c, " \t\n"):
		return fmt.Sprintf("capability %s must be <kind>:<value> with neither part empty and no spaces, e.g. storageclass:default", Quote(c))
	}
	return ""
}

// requiredEmpty reports every field that kubepkg's PackageSource schema
// requires and p leaves empty (index.RequiredEmpty): the API server would
// refuse the PackageSource, and a subscriber would encode the empty value.
func (v *validator) requiredEmpty(f string, p *Package) {
	sp := spec.PackageSpec{Permissions: p.Permissions, Variants: p.Variants}
	for _, e := range spec.RequiredEmpty(&sp) {
		v.errorf(f+"."+e.Path, "%s is required (kubepkg's PackageSource schema requires %s.%s; the API server refuses it empty)", e.JSON, e.Type, e.JSON)
	}
}

// checkPinnedImage returns why ref is not a normalised reference pinned by
// digest (registry/repo[:tag]@sha256:<hex>), or "". unpinned is true when
// the only fault is a missing digest.
func checkPinnedImage(ref string) (msg string, unpinned bool) {
	if _, err := spec.ParseImageRef(ref); errors.Is(err, spec.ErrBadRegistry) {
		why := err.Error()
		why = why[strings.Index(why, "registry "):]
		return fmt.Sprintf("image %s: %s", Quote(ref), cut(why)), false
	}
	d, err := name.NewDigest(ref, name.WeakValidation)
	if err != nil {
		if _, terr := name.NewTag(ref, name.WeakValidation); terr == nil {
			return fmt.Sprintf("image %s is not pinned by digest; write it as %s@sha256:<digest> (kbuild images DIR looks the digest up)", Quote(ref), cut(NormalizeImage(ref))), true
		}
		return fmt.Sprintf("image %s is not a valid digest reference: %s", Quote(ref), cut(err.Error())), false
	}
	if alg, _, _ := strings.Cut(d.DigestStr(), ":"); alg != "sha256" {
		return fmt.Sprintf("image %s is pinned by %s; the format requires @sha256:<64 hex digits>", Quote(ref), cut(alg)), false
	}
	if norm := NormalizeImage(ref); norm != ref {
		return fmt.Sprintf("image %s is not normalised; write it as %s", Quote(ref), cut(norm)), false
	}
	return "", false
}

// image reports ref unless it is normalised and pinned by digest.
func (v *validator) image(field, ref string) {
	msg, unpinned := checkPinnedImage(ref)
	if msg == "" {
		return
	}
	v.errorf(field, "%s", msg)
	if unpinned {
		v.probs[len(v.probs)-1].Code = CodeUnpinnedImage
	}
}
