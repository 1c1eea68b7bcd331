package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	yaml3 "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/yamlscan"
	"kbuild.dev/kbuild/spec"
)

// IndexAPIVersion and IndexKind identify a repository index. The
// apiVersion is the index format's version, not a cluster API version.
const (
	IndexAPIVersion = "kubepkg.dev/v1alpha1"
	IndexKind       = "RepositoryIndex"
)

// ErrUnbuiltComponent is wrapped by the error about a component of a
// written version that names no chart pinned by digest (a recipe's
// component with path, not built).
var ErrUnbuiltComponent = errors.New("in a repository every component names a chart pinned by digest")

// MaxIndexSize caps the size of an index.yaml that ParseIndex reads (an
// index of 100,000 versions is about 200 MB).
const MaxIndexSize = 1 << 30

// Annotations of a build record that become a package's description and
// home in the index.
const (
	DescriptionAnnotation = "kubepkg.dev/description"
	HomeAnnotation        = "kubepkg.dev/home"
)

// RepositoryIndex is index.yaml: every published version of every package,
// newest first.
type RepositoryIndex struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Generated is when the index was made (UTC, whole seconds).
	// Subscribers refuse an index older than one they accepted.
	Generated time.Time `json:"generated"`
	// Expires, when set, is when subscribers stop accepting the index.
	Expires  time.Time                `json:"expires,omitzero"`
	Packages map[string]*IndexPackage `json:"packages"`
	// Sets are the release sets the index holds whole, with their set
	// digests, sorted by package, version and build (see SetDigest).
	Sets []SetDigest `json:"sets,omitempty"`
	// Withdrawn are the versions taken out of the index, sorted by
	// package, version and build; none of them is among Packages.
	Withdrawn []Withdrawal `json:"withdrawn,omitempty"`

	// Unknown lists the fields read that kbuild's types do not have, by
	// package, each package's own fields first, then those of its
	// versions in file order; versions whose spec has one are not in
	// Packages.
	// Never written.
	Unknown []UnknownField `json:"-"`
}

// IndexPackage is one package of the index.
type IndexPackage struct {
	Description string `json:"description,omitempty"`
	Home        string `json:"home,omitempty"`
	// Versions are newest first: semver precedence, then higher build.
	Versions []IndexVersion `json:"versions"`
}

// IndexVersion is one build of one version of a package.
type IndexVersion struct {
	Version string `json:"version"`
	Build   int    `json:"build"`
	// Digest is the spec digest, PackageSpec.Digest.
	Digest string           `json:"digest"`
	Spec   spec.PackageSpec `json:"spec"`
	// Signatures are delegated signatures of the version statement
	// (VersionStatement), required for packages a root delegates.
	Signatures []Signature `json:"signatures,omitempty"`
}

// Counts returns the number of packages and of versions in x.
func (x *RepositoryIndex) Counts() (packages, versions int) {
	for _, p := range x.Packages {
		versions += len(p.Versions)
	}
	return len(x.Packages), versions
}

// newer orders versions newest first: semver precedence, then higher
// build, then (for versions differing only in build metadata) by string.
// kubepkg orders the same way up to the build (repo.Newer), and leaves
// versions differing only in build metadata in no particular order.
func newer(a *semver.Version, av IndexVersion, b *semver.Version, bv IndexVersion) bool {
	if c := a.Compare(b); c != 0 {
		return c > 0
	}
	if av.Build != bv.Build {
		return av.Build > bv.Build
	}
	return av.Version > bv.Version
}

// SortVersions orders every package's versions newest first.
func (x *RepositoryIndex) SortVersions() {
	for _, p := range x.Packages {
		SortNewestFirst(p.Versions)
	}
}

// SortNewestFirst orders versions, of one package, newest first, as the
// index lists them: semver precedence, then higher build.
func SortNewestFirst(versions []IndexVersion) {
	keys := make(map[string]*semver.Version, len(versions))
	for _, v := range versions {
		sv, err := spec.ParseVersion(v.Version)
		if err != nil {
			sv = spec.ZeroVersion
		}
		keys[v.Version] = sv
	}
	sort.SliceStable(versions, func(i, j int) bool {
		a, b := versions[i], versions[j]
		return newer(keys[a.Version], a, keys[b.Version], b)
	})
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// CheckPackageName checks that name is a DNS-1123 label, as package names
// are.
func CheckPackageName(name string) error {
	if len(name) > 63 || !dnsLabel.MatchString(name) {
		return fmt.Errorf("package name %q is not a DNS-1123 label (lowercase letters, digits and '-', at most 63)", name)
	}
	return nil
}

// CheckRecord checks that a build record can enter an index: kind and
// apiVersion, a DNS-1123 name, an exact semver version, build >= 1,
// every component pinned by chart digest rather than a path, and no field
// kubepkg's schema requires left empty (RequiredEmpty).
func CheckRecord(rec *spec.PackageSource) error {
	if rec.Kind != spec.RecordKind {
		return fmt.Errorf("kind is %q, want %s", rec.Kind, spec.RecordKind)
	}
	switch rec.APIVersion {
	case spec.RecordAPIVersion, "kubepkg.dev/v1beta1", "kubepkg.dev/v1alpha1":
	default:
		return fmt.Errorf("apiVersion is %q, want %s", rec.APIVersion, spec.RecordAPIVersion)
	}
	if err := CheckPackageName(rec.Metadata.Name); err != nil {
		return err
	}
	if err := checkEntry(rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build, &rec.Spec, true); err != nil {
		return err
	}
	if empty := spec.RequiredEmpty(&rec.Spec); len(empty) > 0 {
		e := empty[0]
		return fmt.Errorf("%s %s build %d: spec.%s is empty; kubepkg's PackageSource schema requires %s.%s, so the API server would refuse it: set it in the recipe",
			rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build, e.Path, e.Type, e.JSON)
	}
	return nil
}

// checkEntry checks one version of a package. On read (write false) it
// accepts what kubepkg's client accepts: a version that is exact semver
// after an optional leading "v", build 0 (no build), and any component;
// the entry and its spec must agree. What kbuild writes is held to more:
// no "v", build 1 or more, and every component a chart pinned by digest.
func checkEntry(name, version string, build int, s *spec.PackageSpec, write bool) error {
	if _, err := spec.ParseVersion(version); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if build < 0 || build > math.MaxInt32 {
		return fmt.Errorf("%s %s: build is %d, want 0 to %d (kubepkg reads builds as int32)", name, version, build, math.MaxInt32)
	}
	if s.Version != version || s.Build != build {
		return fmt.Errorf("%s %s build %d: the spec says version %q build %d", name, version, build, s.Version, s.Build)
	}
	if !write {
		return nil
	}
	if strings.HasPrefix(version, "v") {
		return fmt.Errorf("%s %s: version starts with \"v\"; kbuild writes %s (a recipe's leading v is stripped when it is built)", name, version, version[1:])
	}
	if build < 1 {
		return fmt.Errorf("%s %s: build is %d, want 1 or more", name, version, build)
	}
	for _, v := range s.Variants {
		for _, c := range v.Components {
			if c.Path == "" && c.Chart != nil && checkDigest(c.Chart.Digest) == nil && c.Chart.Repository != "" && c.Chart.Name != "" && c.Chart.Version != "" {
				if len(c.Libraries) > 0 || len(c.ValuesFiles) > 0 {
					// kubepkg's CRD: libraries and valuesFiles apply to
					// charts in the package tree only.
					return fmt.Errorf("%s %s build %d: variant %q component %q names a chart and has libraries or valuesFiles; kubepkg's schema allows those only for components with path, so the API server would refuse it", name, version, build, v.Name, c.Name)
				}
				continue
			}
			where := fmt.Sprintf("%s %s build %d: variant %q component %q", name, version, build, v.Name, c.Name)
			switch {
			case c.Path != "":
				return fmt.Errorf("%s uses path %q; %w", where, c.Path, ErrUnbuiltComponent)
			case c.Chart == nil:
				return fmt.Errorf("%s has no chart; %w", where, ErrUnbuiltComponent)
			case checkDigest(c.Chart.Digest) != nil:
				return fmt.Errorf("%s chart %s: %w", where, c.Chart.Name, checkDigest(c.Chart.Digest))
			default:
				return fmt.Errorf("%s chart needs repository, name and version", where)
			}
		}
	}
	return nil
}

func checkDigest(d string) error {
	if _, err := spec.ParseDigest(d); err != nil {
		return fmt.Errorf("digest %q is not sha256:<64 lowercase hex>", d)
	}
	return nil
}

// Marshal returns index.yaml: exactly the bytes sigs.k8s.io/yaml writes
// for x (keys in alphabetical order at every level), with each package's
// versions in the order they are in x.
func (x *RepositoryIndex) Marshal() ([]byte, error) {
	size := 256
	for name, p := range x.Packages {
		if err := CheckPackageName(name); err != nil {
			return nil, err
		}
		size += 64 + len(p.Description) + len(p.Home) + 1536*len(p.Versions)
	}
	w := newYWriter(make([]byte, 0, size))
	writeHead(w, x.APIVersion, x.Kind, x.Generated, x.Expires)
	names := make([]string, 0, len(x.Packages))
	for name := range x.Packages {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return yamlscan.KeyLess(names[i], names[j]) })
	if len(names) == 0 {
		w.Empty("{}")
	}
	if size < parallelMinBytes || runtime.GOMAXPROCS(0) < 2 || len(names) < 2 {
		if err := safely(func() error { return writePackages(w, x, names) }); err != nil {
			return nil, err
		}
		writeSets(w, x.Sets)
		if err := writeWithdrawn(w, x.Withdrawn); err != nil {
			return nil, err
		}
		return w.B, nil
	}
	// Write runs of packages in parallel, each from the start of a line,
	// then join them.
	w.EndLine()
	workers := runtime.GOMAXPROCS(0)
	nparts := min(len(names), workers*4)
	parts := make([][]byte, nparts)
	errs := make([]error, nparts)
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for p := 0; p < nparts; p++ {
		run := names[p*len(names)/nparts : (p+1)*len(names)/nparts]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			pw := newYWriter(make([]byte, 0, size/nparts+size/nparts/8))
			errs[p] = safely(func() error { return writePackages(pw, x, run) })
			parts[p] = pw.B
		}()
	}
	wg.Wait()
	total := len(w.B)
	for p := range parts {
		if errs[p] != nil {
			return nil, errs[p]
		}
		total += len(parts[p])
	}
	tail := newYWriter(nil)
	writeSets(tail, x.Sets)
	if err := writeWithdrawn(tail, x.Withdrawn); err != nil {
		return nil, err
	}
	out := make([]byte, 0, total+len(tail.B))
	out = append(out, w.B...)
	for p := range parts {
		out = append(out, parts[p]...)
		parts[p] = nil
	}
	return append(out, tail.B...), nil
}

// writePackages writes the packages names of x, in that order.
func writePackages(w *ywriter, x *RepositoryIndex, names []string) error {
	for _, name := range names {
		if yamlscan.TestHook != nil {
			yamlscan.TestHook(name)
		}
		p := x.Packages[name]
		if p == nil {
			return fmt.Errorf("package %s is null", name)
		}
		if err := writePackageHead(w, name, p.Description, p.Home); err != nil {
			return err
		}
		if len(p.Versions) == 0 {
			w.Empty("[]")
		}
		for i := range p.Versions {
			if err := writeEntry(w, &p.Versions[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeHead writes the keys of an index before its packages, up to
// "packages:".
func writeHead(w *ywriter, apiVersion, kind string, generated, expires time.Time) {
	w.Key(0, "apiVersion")
	w.Str(0, apiVersion)
	if !expires.IsZero() {
		w.Key(0, "expires")
		w.Str(0, expires.Format(time.RFC3339Nano))
	}
	w.Key(0, "generated")
	w.Str(0, generated.Format(time.RFC3339Nano))
	w.Key(0, "kind")
	w.Str(0, kind)
	w.Key(0, "packages")
}

// writePackageHead writes a package's key, description and home, up to
// "versions:".
func writePackageHead(w *ywriter, name, desc, home string) error {
	w.Key(2, name)
	if w.Slow {
		return fmt.Errorf("index: cannot write package name %q", name)
	}
	mark := w.Save()
	w.FieldStr(4, "description", desc)
	w.FieldStr(4, "home", home)
	if w.Slow {
		w.Restore(mark)
		part, err := slowPart(map[string]any{"description": desc, "home": home}, 2)
		if err != nil {
			return err
		}
		w.AppendLines(part)
	}
	w.Key(4, "versions")
	return nil
}

// writeEntry writes v as an item of a package's versions.
func writeEntry(w *ywriter, v *IndexVersion) error {
	mark := w.Save()
	w.Item(4)
	writeVersion(w, 6, v)
	if !w.Slow {
		return nil
	}
	w.Restore(mark)
	part, err := slowPart(map[string]any{"versions": []*IndexVersion{v}}, 3)
	if err != nil {
		return err
	}
	w.AppendLines(part)
	return nil
}

func writeVersion(w *ywriter, col int, v *IndexVersion) {
	w.Mapping(col, func(col int) {
		w.Key(col, "build")
		w.Int(v.Build)
		w.Key(col, "digest")
		w.Str(col, v.Digest)
		if len(v.Signatures) > 0 {
			w.Key(col, "signatures")
			writeSignatures(w, col, v.Signatures)
		}
		w.Key(col, "spec")
		writeSpec(w, col+2, &v.Spec)
		w.Key(col, "version")
		w.Str(col, v.Version)
	})
}

// slowPart writes v with sigs.k8s.io/yaml as the value of a package's key
// in an index (so at the same indentation, folded at the same columns) and
// returns its lines after the first skip ("packages:", "  x:", …).
func slowPart(v map[string]any, skip int) ([]byte, error) {
	for k, x := range v {
		if s, ok := x.(string); ok && s == "" {
			delete(v, k)
		}
	}
	if len(v) == 0 {
		return nil, nil
	}
	b, err := sigsyaml.Marshal(map[string]any{"packages": map[string]any{"x": v}})
	if err != nil {
		return nil, err
	}
	for ; skip > 0; skip-- {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			return nil, errors.New("index: unexpected yaml.v2 output")
		}
		b = b[j+1:]
	}
	return b, nil
}

// ParseIndex parses index.yaml strictly (unknown fields and duplicate keys
// are errors) and checks it: apiVersion and kind, a generated time,
// DNS-1123 package names, exact semver versions, builds >= 1, entries that
// agree with their spec, and no version and build twice. It does not check
// digests or signatures; Verify does.
func ParseIndex(b []byte) (*RepositoryIndex, error) { return parseIndex(b, false, nil) }

// ParseIndexFunc parses and checks index.yaml as ParseIndex does, giving
// each package to visit as soon as it is decoded — possibly from several
// goroutines at once — which says whether the returned index keeps it. A
// package not kept must not be referenced after visit returns (its memory
// is used again): copy what is needed. The index's strings share b, which
// must not be modified or released while they are in use. It reads an
// index of 100,000 versions keeping only what a caller needs of most
// packages.
func ParseIndexFunc(b []byte, visit func(name string, p *IndexPackage) (keep bool, err error)) (*RepositoryIndex, error) {
	return parseIndex(b, true, func(name string, p *IndexPackage) (bool, error) {
		if err := checkPackage(name, p); err != nil {
			return false, err
		}
		return visit(name, p)
	})
}

// visitor is called with each package as soon as it is decoded, possibly
// from several goroutines at once; it checks the package and reports
// whether to keep it in the index. A package not kept must not be
// referenced after the call: its memory is used again. Without a visitor
// every package is checked with checkPackage and kept.
type visitor func(name string, p *IndexPackage) (keep bool, err error)

// parseIndex is ParseIndex; with share, the index's strings use b itself,
// which must then never be modified (Verify, to hold an index of 300 MB
// once rather than twice).
func parseIndex(b []byte, share bool, visit visitor) (*RepositoryIndex, error) {
	if len(b) > MaxIndexSize {
		return nil, fmt.Errorf("index is %d bytes, more than the %d allowed", len(b), MaxIndexSize)
	}
	all := visit == nil
	if all {
		visit = func(name string, p *IndexPackage) (bool, error) { return true, checkPackage(name, p) }
	}
	x, err := readIndexFast(b, share, visit)
	fast := err == nil
	var bail *yamlscan.Bail
	if errors.As(err, &bail) && bail.Refused {
		return nil, fmt.Errorf("index: %w", bail)
	}
	if errors.As(err, &bail) {
		// Beyond what kbuild and kubepkg write: read it as kubepkg does.
		if len(b) > MaxSlowYAML {
			return nil, fmt.Errorf("index: %v (YAML beyond what kbuild and kubepkg write is read only in files up to %d MiB)", bail, MaxSlowYAML>>20)
		}
		x, err = readLenient(b)
	}
	if err != nil {
		return nil, err
	}
	if !fast {
		// Decoded by yaml.v2: visit the packages now.
		names := make([]string, 0, len(x.Packages))
		for name := range x.Packages {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			keep, err := visit(name, x.Packages[name])
			if err != nil {
				return nil, err
			}
			if !keep {
				delete(x.Packages, name)
			}
		}
	}
	if err := x.check(); err != nil {
		return nil, err
	}
	if err := x.CheckSets(all); err != nil {
		return nil, err
	}
	return x, nil
}

// readIndexFast reads an index with the fast reader, leniently: unknown
// fields are skipped and listed in x.Unknown, in the order readLenient
// lists them (sortUnknown).
func readIndexFast(b []byte, share bool, visit visitor) (*RepositoryIndex, error) {
	r, err := newYReaderOf(b, share, nil)
	if err != nil {
		return nil, err
	}
	r.lenient = true
	x := &RepositoryIndex{}
	if err := readSafely(r, func(r *yreader) error { return readIndex(r, x, visit) }); err != nil {
		return nil, err
	}
	sortUnknown(r.found)
	x.Unknown = r.found
	return x, nil
}

// check checks what the index says besides its packages. Like kubepkg's
// client it accepts an index without apiVersion or generated time (kbuild
// always writes both).
func (x *RepositoryIndex) check() error {
	if x.APIVersion != IndexAPIVersion && x.APIVersion != "" || x.Kind != IndexKind {
		return fmt.Errorf("not a repository index: apiVersion %q kind %q, want %s %s", x.APIVersion, x.Kind, IndexAPIVersion, IndexKind)
	}
	if x.Packages == nil {
		x.Packages = map[string]*IndexPackage{} // "packages: null" is an empty index
	}
	if !x.Expires.IsZero() && !x.Expires.After(x.Generated) {
		return fmt.Errorf("index expires %s, not after it was generated (%s)", x.Expires.Format(time.RFC3339), x.Generated.Format(time.RFC3339))
	}
	return x.checkWithdrawn()
}

// checkPackage checks one package of an index as read: a DNS-1123 name,
// versions that agree with their spec (checkEntry on read), well-formed
// digests and signatures, and no version and build twice.
func checkPackage(name string, p *IndexPackage) error {
	if err := CheckPackageName(name); err != nil {
		return err
	}
	if p == nil || len(p.Versions) == 0 {
		return fmt.Errorf("package %s has no versions", name)
	}
	seen := make(map[versionKey]bool, len(p.Versions))
	for i := range p.Versions {
		v := &p.Versions[i]
		if err := checkEntry(name, v.Version, v.Build, &v.Spec, false); err != nil {
			return err
		}
		if err := checkDigest(v.Digest); err != nil {
			return fmt.Errorf("%s %s build %d: %w", name, v.Version, v.Build, err)
		}
		for _, s := range v.Signatures {
			if err := CheckSignature(s); err != nil {
				return fmt.Errorf("%s %s build %d: signature: %w", name, v.Version, v.Build, err)
			}
		}
		k := versionKey{v.Version, v.Build}
		if seen[k] {
			return fmt.Errorf("%s %s build %d appears twice", name, v.Version, v.Build)
		}
		seen[k] = true
	}
	return nil
}

// Fast decoders of the index.

func readIndex(r *yreader, x *RepositoryIndex, visit visitor) error {
	return r.ReadRoot(func(k string) error {
		var err error
		switch k {
		case "apiVersion":
			x.APIVersion, err = r.ReadString(k)
		case "kind":
			x.Kind, err = r.ReadString(k)
		case "generated":
			x.Generated, err = r.ReadTime(k)
		case "expires":
			x.Expires, err = r.ReadTime(k)
		case "packages":
			x.Packages, err = readPackagesParallel(r, visit)
		case "sets":
			x.Sets, err = readSets(r)
		case "withdrawn":
			x.Withdrawn, err = readWithdrawn(r)
		default:
			err = r.unknown("index", k)
		}
		return err
	})
}

func readPackages(r *yreader, visit visitor) (map[string]*IndexPackage, error) {
	out := map[string]*IndexPackage{}
	present, err := r.ReadMap(func(name string) error { return readPackage(r, out, name, visit) })
	if !present {
		out = nil
	}
	return out, err
}

// readPackage reads package name into out, if visit keeps it.
func readPackage(r *yreader, out map[string]*IndexPackage, name string, visit visitor) error {
	if yamlscan.TestHook != nil {
		yamlscan.TestHook(name)
	}
	p := &IndexPackage{}
	before := len(r.found)
	present, err := r.ReadMap(func(k string) error {
		var err error
		switch k {
		case "description":
			p.Description, err = r.ReadString(k)
		case "home":
			p.Home, err = r.ReadString(k)
		case "versions":
			p.Versions, err = readVersions(r)
		default:
			err = r.unknown("package "+name, k)
		}
		return err
	})
	if bail := bailOf(err); bail != nil && r.lenient {
		// Name the package (and version, see readVersions) for an index
		// too large to be read again with sigs.k8s.io/yaml.
		sep := ": "
		if bail.Refused {
			sep = " " // "package x version ..."
		}
		return &yamlscan.Bail{Line: bail.Line, Msg: "package " + name + sep + bail.Msg, Refused: bail.Refused}
	}
	if err != nil {
		return err
	}
	dropped := false
	for i := before; i < len(r.found); i++ {
		r.found[i].Package = name
		dropped = dropped || r.found[i].Dropped
	}
	if !present {
		p = nil
	} else if dropped && len(p.Versions) == 0 {
		// Every version left out: so is the package, as kubepkg leaves it.
		return nil
	}
	keep, err := visit(name, p)
	if keep {
		out[name] = p
	} else {
		r.slab.reset() // nothing of the package is kept
	}
	return err
}

// parallelMinBytes is the size of a packages mapping from which it is read
// and written in parallel.
var parallelMinBytes = 4 << 20

// readPackagesParallel reads the value of "packages:" like readPackages,
// but when it is a large block mapping at column 2 it splits it at the
// lines where package keys start and reads the parts in parallel. In what
// the fast reader accepts, a line with content at exactly column 2 inside
// that mapping can only be a package key: everything else in a package is
// indented further, continuation lines included.
func readPackagesParallel(r *yreader, visit visitor) (map[string]*IndexPackage, error) {
	if !r.AtLineEnd() {
		return readPackages(r, visit)
	}
	s := r.Src()
	type split struct{ off, line int }
	var splits []split
	end, line := len(s), r.Line()+1
	off := r.FindEOL(r.Pos()) + 1
	for off < len(s) {
		eol := r.FindEOL(off)
		i := off
		for i < eol && s[i] == ' ' {
			i++
		}
		switch {
		case i == eol || s[i] == '#': // blank or comment
		case i == off: // column 0: the mapping ends
			end = off
		case i-off == 2:
			splits = append(splits, split{off, line})
		case len(splits) == 0: // content before the first package key
			return readPackages(r, visit)
		}
		if end == off {
			break
		}
		off, line = eol+1, line+1
	}
	if end > len(s) {
		end = len(s)
	}
	workers := runtime.GOMAXPROCS(0)
	if len(splits) < 2 || workers < 2 || end-splits[0].off < parallelMinBytes {
		return readPackages(r, visit)
	}
	nparts := min(len(splits), workers*4)
	maps := make([]map[string]*IndexPackage, nparts)
	names := make([][]string, nparts)
	errs := make([]error, nparts)
	found := make([][]UnknownField, nparts)
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for p := 0; p < nparts; p++ {
		first := splits[p*len(splits)/nparts]
		stop := end
		if p+1 < nparts {
			stop = splits[(p+1)*len(splits)/nparts].off
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sub := &yreader{Reader: r.Part(stop, first.off, first.line, 2, 0), slab: &slabs{}, lenient: r.lenient}
			m := map[string]*IndexPackage{}
			var seen []string
			err := readSafely(sub, func(sub *yreader) error {
				c, err := sub.MapLoop(2, func(name string) error {
					seen = append(seen, name)
					return readPackage(sub, m, name, visit)
				})
				if err == nil && c >= 0 {
					err = sub.Bailf("unexpected indentation")
				}
				return err
			})
			maps[p], names[p], errs[p], found[p] = m, seen, err, sub.found
		}()
	}
	wg.Wait()
	out := map[string]*IndexPackage{}
	all := map[string]bool{}
	for p := range maps {
		if errs[p] != nil {
			return nil, errs[p]
		}
		for _, name := range names[p] {
			if all[name] {
				return nil, &yamlscan.Bail{Line: splits[p*len(splits)/nparts].line, Msg: fmt.Sprintf("duplicate key %q", name)}
			}
			all[name] = true
		}
		for name, pkg := range maps[p] {
			out[name] = pkg
		}
		r.found = append(r.found, found[p]...)
	}
	// Continue after the mapping.
	r.Seek(end, line)
	return out, nil
}

func readVersions(r *yreader) ([]IndexVersion, error) {
	var drop []int
	n := 0
	list, err := readList(r, &r.slab.versions, func(r *yreader, v *IndexVersion) (bool, error) {
		i, start, skipped, dash := n, r.LineStart(), r.skipped, r.Ind()
		n++
		present, err := r.ReadMap(func(k string) error {
			var err error
			switch k {
			case "version":
				v.Version, err = r.ReadString(k)
			case "build":
				v.Build, err = r.ReadInt(k)
			case "digest":
				v.Digest, err = r.ReadString(k)
			case "spec":
				_, err = readSpec(r, &v.Spec)
			case "signatures":
				v.Signatures, err = readSignatures(r)
			default:
				err = r.unknown("version", k)
			}
			return err
		})
		if bail := bailOf(err); bail != nil && r.lenient {
			// Say which version, if it is a type error that kubepkg's
			// client refuses too.
			if verr := versionTypeError(r.Src()[start:r.ItemEnd(start, dash)]); verr != nil {
				return false, &yamlscan.Bail{Line: bail.Line, Msg: verr.Error(), Refused: true}
			}
			if !bail.Refused {
				return false, &yamlscan.Bail{Line: bail.Line, Msg: fmt.Sprintf("versions[%d]: %s", i, bail.Msg)}
			}
		}
		if err == nil && r.skipped != skipped {
			var dropped bool
			dropped, err = r.versionUnknowns(r.Src()[start:max(start, r.LineStart())], v)
			if dropped {
				drop = append(drop, i)
			}
		}
		return present, err
	})
	if err != nil || len(drop) == 0 {
		return list, err
	}
	kept := list[:0]
	for i := range list {
		if len(drop) > 0 && drop[0] == i {
			drop = drop[1:]
			continue
		}
		kept = append(kept, list[i])
	}
	return kept, nil
}

// bailOf returns err's *yamlscan.Bail, or nil. (Called only on an error, so
// that the reader does not allocate per value.)
func bailOf(err error) *yamlscan.Bail {
	if err == nil {
		return nil
	}
	var bail *yamlscan.Bail
	if errors.As(err, &bail) {
		return bail
	}
	return nil
}

// versionTypeError decodes text, one entry of a package's versions (from
// its "-" line), as kubepkg's client does and returns the error that names
// its version and the field whose value has the wrong type, or nil.
func versionTypeError(text string) error {
	if len(text) > MaxSlowYAML || yamlscan.CheckPlain([]byte(text), "") != nil {
		return nil
	}
	var items []any
	if err := sigsyaml.Unmarshal([]byte(text), &items); err != nil || len(items) != 1 {
		return nil
	}
	return decodeVersion(items[0])
}

// decodeVersion decodes raw, a version entry decoded generically, into an
// IndexVersion as kubepkg's client would, and returns the error naming the
// version (by what it says) and the field whose value has the wrong type.
func decodeVersion(raw any) error {
	j, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var v IndexVersion
	if err := json.Unmarshal(j, &v); err != nil {
		vm, _ := raw.(map[string]any)
		version, build := "(no version)", any(0)
		if s, ok := vm["version"].(string); ok {
			version = s
		}
		switch b := vm["build"].(type) {
		case nil:
		case string:
			build = strconv.Quote(b)
		default:
			build = b
		}
		return fmt.Errorf("version %s build %v: %w", version, build, fieldTypeError(err))
	}
	return nil
}

// fieldTypeError rewords encoding/json's type error as the field, the
// type found and the type wanted.
func fieldTypeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %s is a YAML %s, want %s", te.Field, jsonKindWord(te.Value), goKindWord(te.Type))
	}
	return err
}

func jsonKindWord(v string) string {
	switch v {
	case "object":
		return "mapping"
	case "array":
		return "sequence"
	case "bool":
		return "boolean"
	}
	return v
}

func goKindWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a sequence"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer"
	}
	return t.String()
}

// versionUnknowns names the fields the fast reader skipped in version v,
// whose entry is text (from its "-" line), by reading text again
// generically, and reports whether v is left out. The package is named by
// readPackage.
func (r *yreader) versionUnknowns(text string, v *IndexVersion) (bool, error) {
	if len(text) > MaxSlowYAML {
		return false, r.Bailf("%s build %d: an entry of more than %d MiB with fields kbuild does not know", v.Version, v.Build, MaxSlowYAML>>20)
	}
	var items []map[string]any
	if err := yaml3.Unmarshal([]byte(text), &items); err != nil || len(items) != 1 {
		return false, r.Bailf("%s build %d: cannot read the entry again to name the fields kbuild does not know (%v)", v.Version, v.Build, err)
	}
	found, dropped := versionUnknowns(items[0], "", v)
	r.found = append(r.found, found...)
	return dropped, nil
}
