package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"kbuild.dev/kbuild/internal/yamlscan"
	"kbuild.dev/kbuild/spec"
)

// Builder collects package versions — from build records and from a
// verified base index — into an index, enforcing that one version and
// build has one content. Add may be called from several goroutines.
type Builder struct {
	compact bool

	mu        sync.Mutex
	pkgs      map[string]*builtPkg
	withdrawn map[withdrawnKey]*Withdrawal
	baseTime  time.Time // generated time of the base, if any

	moves     map[string]string // Relocate
	moveOrder []string
	relocated []relocatedVersion
}

// BuilderOption configures NewBuilder.
type BuilderOption func(*Builder)

// Compact makes the Builder keep each version only as the YAML it has in
// index.yaml, written when it is added, instead of its parsed spec: a
// tenth of the memory and of the garbage-collection work for an index of
// 100,000 versions. Index is then unavailable; use Marshal. Default: off.
func Compact() BuilderOption { return func(b *Builder) { b.compact = true } }

type builtPkg struct {
	desc, home string // of the base index
	versions   map[versionKey]*builtVersion
}

type versionKey struct {
	version string
	build   int
}

type builtVersion struct {
	v      IndexVersion // in compact mode without Spec
	sv     *semver.Version
	origin string // where the version came from; "" for the base index
	// desc and home are the annotations of the record.
	desc, home string
	// head and tail are the version's YAML in compact mode, around its
	// signatures: "    - build: …\n      digest: …\n" and "      spec: … version: …\n".
	head, tail []byte
	// set are the members when the version is a release set (digests
	// unset), nil otherwise.
	set []SetMember
}

// NewBuilder returns an empty Builder.
func NewBuilder(opts ...BuilderOption) *Builder {
	b := &Builder{pkgs: map[string]*builtPkg{}}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Add adds the version that the build record rec describes, with the
// delegated signatures sigs (which may be nil). origin names where rec came
// from, for error messages. A version and build added before must have the
// same spec digest, otherwise Add returns a *ConflictError (against the
// base index) or a *DuplicateError (against another record); with the same
// digest their signatures are merged.
func (b *Builder) Add(origin string, rec *spec.PackageSource, sigs []Signature) error {
	if err := CheckRecord(rec); err != nil {
		return fmt.Errorf("%s: %w", origin, err)
	}
	d, err := rec.Spec.Digest()
	if err != nil {
		return fmt.Errorf("%s: %w", origin, err)
	}
	for _, s := range sigs {
		if err := CheckSignature(s); err != nil {
			return fmt.Errorf("%s: %w", origin, err)
		}
	}
	bv := &builtVersion{
		v:      IndexVersion{Version: rec.Spec.Version, Build: rec.Spec.Build, Digest: d, Spec: rec.Spec},
		origin: origin,
		desc:   rec.Metadata.Annotations[DescriptionAnnotation],
		home:   rec.Metadata.Annotations[HomeAnnotation],
	}
	for _, s := range sigs {
		bv.v.Signatures = AddSignature(bv.v.Signatures, s)
	}
	name := rec.Metadata.Name
	if b.compact {
		name = strings.Clone(name) // rec may be parsed in place (AddRecord)
	}
	// A version already added (published in the base, typically) is only
	// compared, not written again.
	b.mu.Lock()
	if t := b.withdrawn[withdrawnKey{name, bv.v.Version, bv.v.Build}]; t != nil {
		b.mu.Unlock()
		return &WithdrawnError{Origin: origin, Withdrawal: *t}
	}
	if p := b.pkgs[name]; p != nil {
		if old := p.versions[versionKey{bv.v.Version, bv.v.Build}]; old != nil {
			defer b.mu.Unlock()
			return b.merge(name, old, bv)
		}
	}
	b.mu.Unlock()
	if err := b.prepare(bv); err != nil {
		return fmt.Errorf("%s: %w", origin, err)
	}
	return b.insert(name, bv)
}

// AddPublished adds every version of x, a published base index, as it was
// published (delegated versions that lacked signatures included), and
// records its generated time and withdrawals: published versions are kept,
// and a record added later with the same version and build must have the
// same digest. Call it before Add, with an index trust.Verify accepted
// (trust.AddBase and trust.AddVerifiedFunc are the ways to call it).
func (b *Builder) AddPublished(x *RepositoryIndex, withdrawn []Withdrawal) error {
	type job struct {
		name string
		bv   *builtVersion
	}
	var all []job
	for name, p := range x.Packages {
		b.mu.Lock()
		bp := b.pkg(name)
		bp.desc, bp.home = p.Description, p.Home
		b.mu.Unlock()
		for i := range p.Versions {
			bv := &builtVersion{v: p.Versions[i]}
			if err := b.relocate(name, &bv.v); err != nil {
				return err
			}
			all = append(all, job{name, bv})
		}
	}
	err := parallel(len(all), func(i int) error { return b.prepare(all[i].bv) })
	if err != nil {
		return err
	}
	for _, j := range all {
		if err := b.insert(j.name, j.bv); err != nil {
			return err
		}
	}
	b.SetPublished(x.Generated, withdrawn)
	return nil
}

// AddPublishedPackage adds every version of one package of a published
// base index as it is decoded, possibly from several goroutines at once;
// the package is not referenced after it returns. Call SetPublished when
// every package is in.
func (b *Builder) AddPublishedPackage(name string, p *IndexPackage) error {
	bvs := make([]*builtVersion, len(p.Versions))
	for i := range p.Versions {
		bvs[i] = &builtVersion{v: p.Versions[i]}
		if err := b.relocate(name, &bvs[i].v); err != nil {
			return err
		}
		if err := b.prepare(bvs[i]); err != nil {
			return err
		}
	}
	name = strings.Clone(name)
	b.mu.Lock()
	bp := b.pkg(name)
	bp.desc, bp.home = strings.Clone(p.Description), strings.Clone(p.Home)
	b.mu.Unlock()
	for _, bv := range bvs {
		if err := b.insert(name, bv); err != nil {
			return err
		}
	}
	return nil
}

// SetPublished records the generated time and withdrawals of the
// published base whose packages were added with AddPublishedPackage.
func (b *Builder) SetPublished(generated time.Time, withdrawn []Withdrawal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.baseTime = generated
	for _, t := range withdrawn {
		b.addWithdrawn(&t)
	}
}

// IsCompact reports whether the Builder was made with Compact.
func (b *Builder) IsCompact() bool { return b.compact }

// prepare parses the version's semver and, in compact mode, writes its
// YAML and drops its spec.
func (b *Builder) prepare(bv *builtVersion) error {
	if b.compact {
		// Keep no string that holds on to the text the version was parsed
		// from (a record, or a base index that may be unmapped).
		bv.v.Version, bv.v.Digest = strings.Clone(bv.v.Version), strings.Clone(bv.v.Digest)
		bv.desc, bv.home = strings.Clone(bv.desc), strings.Clone(bv.home)
		sigs := make([]Signature, len(bv.v.Signatures))
		for i, s := range bv.v.Signatures {
			sigs[i] = Signature{KeyID: strings.Clone(s.KeyID), Sig: strings.Clone(s.Sig)}
		}
		bv.v.Signatures = sigs
	}
	var err error
	if bv.sv, err = spec.ParseVersion(bv.v.Version); err != nil {
		return err
	}
	// A malformed set is not listed as one; validate and promote say why.
	if members, isSet, err := SetMembers(&bv.v.Spec); err == nil && isSet {
		for i := range members {
			members[i].Package, members[i].Version = strings.Clone(members[i].Package), strings.Clone(members[i].Version)
		}
		bv.set = members
	}
	if !b.compact {
		return nil
	}
	v := bv.v
	v.Signatures = nil
	bp := renderBufs.Get().(*[]byte)
	defer renderBufs.Put(bp)
	w := newYWriter((*bp)[:0])
	err = writeEntry(w, &v)
	*bp = w.B
	if err != nil {
		return err
	}
	out := append(make([]byte, 0, len(w.B)), w.B...)
	// Split after "    - build: N\n      digest: D\n", where signatures go.
	i := bytes.IndexByte(out, '\n')
	j := i + 1 + bytes.IndexByte(out[i+1:], '\n')
	if i < 0 || j <= i || !bytes.HasPrefix(out[i+1:], []byte("      digest: ")) {
		return errors.New("index: unexpected YAML of a version")
	}
	bv.head, bv.tail = out[:j+1:j+1], out[j+1:]
	bv.v.Spec = spec.PackageSpec{}
	return nil
}

// slabPool holds the values compact Builders parse records into.
var slabPool = sync.Pool{New: func() any { return &slabs{} }}

// renderBufs holds scratch buffers for writing versions.
var renderBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// AddRecord parses the build record data (see ParseRecord) and adds it as
// Add does; a document of another kind gives ErrNotRecord. A compact
// Builder parses data in place (it keeps nothing of it), so data must not
// change during the call.
func (b *Builder) AddRecord(origin string, data []byte, sigs []Signature) error {
	return b.AddRecordWith(origin, data, sigs, nil)
}

// AddRecordWith is AddRecord that calls edit, when not nil, on the parsed
// record before adding it: the one parse of the record serves both, and
// edit may change it (pin a chart's digest) but must keep nothing of it,
// as it may be parsed in place. An error of edit is returned as it is.
func (b *Builder) AddRecordWith(origin string, data []byte, sigs []Signature, edit func(*spec.PackageSource) error) error {
	var slab *slabs
	if b.compact {
		// Nothing of the record is kept: parse it in place, into values
		// used again for the next record.
		slab = slabPool.Get().(*slabs)
		defer func() { slab.reset(); slabPool.Put(slab) }()
	}
	rec, err := parseRecord(data, b.compact, slab)
	if err != nil {
		if errors.Is(err, ErrNotRecord) {
			return err
		}
		return fmt.Errorf("build record %s: %w", origin, err)
	}
	if edit != nil {
		if err := edit(rec); err != nil {
			return err
		}
	}
	return b.Add(origin, rec, sigs)
}

func (b *Builder) pkg(name string) *builtPkg {
	p := b.pkgs[name]
	if p == nil {
		p = &builtPkg{versions: map[versionKey]*builtVersion{}}
		b.pkgs[name] = p
	}
	return p
}

// insert adds bv to package name, or merges its signatures into the same
// version added before.
func (b *Builder) insert(name string, bv *builtVersion) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pkg(name)
	k := versionKey{bv.v.Version, bv.v.Build}
	old, ok := p.versions[k]
	if !ok {
		p.versions[k] = bv
		return nil
	}
	return b.merge(name, old, bv)
}

// merge adds bv to the same version added before, old: their digests must
// be equal, and their signatures are merged. b.mu is held.
func (b *Builder) merge(name string, old, bv *builtVersion) error {
	k := versionKey{old.v.Version, old.v.Build}
	if old.v.Digest != bv.v.Digest {
		if old.origin == "" {
			return &ConflictError{Package: name, Version: k.version, Build: k.build, Published: old.v.Digest, Built: bv.v.Digest}
		}
		first, second := old.origin, bv.origin
		if second < first {
			first, second = second, first
		}
		return &DuplicateError{Package: name, Version: k.version, Build: k.build, First: first, Second: second}
	}
	for _, s := range bv.v.Signatures {
		if b.compact {
			s = Signature{KeyID: strings.Clone(s.KeyID), Sig: strings.Clone(s.Sig)}
		}
		old.v.Signatures = AddSignature(old.v.Signatures, s)
	}
	if old.origin == "" && bv.origin != "" {
		old.desc, old.home = bv.desc, bv.home
		if b.compact {
			old.desc, old.home = strings.Clone(bv.desc), strings.Clone(bv.home)
		}
	}
	return nil
}

// Reset drops every version added (and the base), releasing their memory.
func (b *Builder) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pkgs, b.withdrawn, b.baseTime = map[string]*builtPkg{}, nil, time.Time{}
}

// Has reports whether version and build of package name has been added
// (from the base or a record).
func (b *Builder) Has(name, version string, build int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pkgs[name]
	return p != nil && p.versions[versionKey{version, build}] != nil
}

// Counts returns the number of packages and versions added.
func (b *Builder) Counts() (packages, versions int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pkgs {
		versions += len(p.versions)
	}
	return len(b.pkgs), versions
}

// sorted returns the package names in yaml.v2 key order and each
// package's versions newest first, with its description and home: those of
// the newest record that has them, else the base index's.
func (b *Builder) sorted() ([]string, map[string][]*builtVersion, map[string][2]string) {
	names := make([]string, 0, len(b.pkgs))
	vs := make(map[string][]*builtVersion, len(b.pkgs))
	meta := make(map[string][2]string, len(b.pkgs))
	for name, p := range b.pkgs {
		names = append(names, name)
		list := make([]*builtVersion, 0, len(p.versions))
		for _, bv := range p.versions {
			list = append(list, bv)
		}
		sort.Slice(list, func(i, j int) bool { return newer(list[i].sv, list[i].v, list[j].sv, list[j].v) })
		vs[name] = list
		desc, home := "", ""
		for _, bv := range list {
			if desc == "" {
				desc = bv.desc
			}
			if home == "" {
				home = bv.home
			}
		}
		if desc == "" {
			desc = p.desc
		}
		if home == "" {
			home = p.home
		}
		meta[name] = [2]string{desc, home}
	}
	sort.Slice(names, func(i, j int) bool { return yamlscan.KeyLess(names[i], names[j]) })
	return names, vs, meta
}

// Index returns the index of every version added, generated at generated
// (converted to UTC and truncated to whole seconds), without expiry. It is
// not available in compact mode.
func (b *Builder) Index(generated time.Time) (*RepositoryIndex, error) {
	if b.compact {
		return nil, errors.New("index: a compact Builder keeps no specs; use Marshal")
	}
	generated, err := b.checkTime(generated)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	names, vs, meta := b.sorted()
	x := &RepositoryIndex{APIVersion: IndexAPIVersion, Kind: IndexKind, Generated: generated, Packages: make(map[string]*IndexPackage, len(names))}
	for _, name := range names {
		p := &IndexPackage{Description: meta[name][0], Home: meta[name][1], Versions: make([]IndexVersion, len(vs[name]))}
		for i, bv := range vs[name] {
			p.Versions[i] = bv.v
		}
		x.Packages[name] = p
	}
	if len(b.withdrawn) > 0 {
		x.Withdrawn = b.withdrawals()
	}
	x.Sets = b.sets(names, vs)
	return x, nil
}

func (b *Builder) checkTime(generated time.Time) (time.Time, error) {
	if generated.IsZero() {
		return generated, errors.New("index needs a generated time")
	}
	generated = generated.UTC().Truncate(time.Second)
	b.mu.Lock()
	base := b.baseTime
	b.mu.Unlock()
	if generated.Before(base) {
		return generated, fmt.Errorf("the new index would be generated %s, before the base index (generated %s); subscribers would refuse it as a rollback; set SOURCE_DATE_EPOCH to a later time",
			generated.Format(time.RFC3339), base.Format(time.RFC3339))
	}
	return generated, nil
}

// Marshal returns index.yaml of every version added, generated at
// generated and expiring at expires (none when zero; both in UTC whole
// seconds): the bytes RepositoryIndex.Marshal writes. In compact mode it assembles the versions'
// YAML into one buffer of the exact size.
func (b *Builder) Marshal(generated, expires time.Time) ([]byte, error) {
	r, err := b.Render(generated, expires)
	if err != nil {
		return nil, err
	}
	if len(r.parts) == 1 {
		return r.parts[0], nil
	}
	out := make([]byte, 0, r.size)
	for _, p := range r.parts {
		out = append(out, p...)
	}
	return out, nil
}

// Rendered is an index laid out for writing: the bytes Marshal returns, in
// the parts a compact Builder holds them in (each version's YAML as it was
// written when the version was added), never assembled into one buffer.
// It does not change: it may be written any number of times, from several
// goroutines at once — to a file and to the hashes of its signatures —
// and stays valid after the Builder is Reset or changed (it keeps the
// parts' memory until it is dropped).
type Rendered struct {
	parts [][]byte
	size  int64
}

// Size returns the number of bytes of the index.
func (r *Rendered) Size() int64 { return r.size }

// Parts returns the index's bytes in the parts it is laid out in, to be
// read, never changed: they are shared with every other reader.
func (r *Rendered) Parts() [][]byte { return r.parts }

// WriteTo writes the index to w and returns the number of bytes written.
func (r *Rendered) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range r.parts {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Render lays out the index of every version added, generated at
// generated and expiring at expires, as Marshal writes it.
func (b *Builder) Render(generated, expires time.Time) (*Rendered, error) {
	if !expires.IsZero() {
		expires = expires.UTC().Truncate(time.Second)
	}
	if !b.compact {
		x, err := b.Index(generated)
		if err != nil {
			return nil, err
		}
		x.Expires = expires
		data, err := x.Marshal()
		if err != nil {
			return nil, err
		}
		return &Rendered{parts: [][]byte{data}, size: int64(len(data))}, nil
	}
	r := &Rendered{}
	err := b.emit(generated, expires, func(n int) { r.parts = make([][]byte, 0, n) }, func(p []byte) {
		if len(p) > 0 {
			r.parts = append(r.parts, p)
			r.size += int64(len(p))
		}
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// emit lays out the index of a compact Builder in parts, after telling
// at most how many.
func (b *Builder) emit(generated, expires time.Time, parts func(int), add func([]byte)) error {
	generated, err := b.checkTime(generated)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	names, vs, meta := b.sorted()
	head := newYWriter(nil)
	writeHead(head, IndexAPIVersion, IndexKind, generated, expires)
	tail := newYWriter(nil)
	writeSets(tail, b.sets(names, vs))
	if err := writeWithdrawn(tail, b.withdrawals()); err != nil {
		return err
	}
	if len(names) == 0 {
		head.Empty("{}")
		parts(2)
		add(head.B)
		add(tail.B)
		return nil
	}
	head.Newline()
	// Each package's lines before its versions, and each version's
	// signatures.
	pkgHeads := make([][]byte, len(names))
	sigs := map[*builtVersion][]byte{}
	n := 2 + len(names)
	for i, name := range names {
		w := newYWriter(nil)
		if err := writePackageHead(w, name, meta[name][0], meta[name][1]); err != nil {
			return err
		}
		w.Newline()
		pkgHeads[i] = w.B
		n += 3 * len(vs[name])
		for _, bv := range vs[name] {
			if len(bv.v.Signatures) > 0 {
				sw := newYWriter(nil)
				sw.Key(6, "signatures")
				writeSignatures(sw, 6, bv.v.Signatures)
				if sw.Slow {
					return fmt.Errorf("%s %s build %d: signatures must be printable ASCII", name, bv.v.Version, bv.v.Build)
				}
				sigs[bv] = sw.B
			}
		}
	}
	parts(n)
	add(head.B)
	for i, name := range names {
		add(pkgHeads[i])
		for _, bv := range vs[name] {
			add(bv.head)
			add(sigs[bv])
			add(bv.tail)
		}
	}
	add(tail.B)
	return nil
}

// parallel runs f(0) … f(n-1) on GOMAXPROCS goroutines and returns the
// error of the lowest i that failed; a panic in f is an error.
func parallel(n int, f func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	errs := make([]error, n)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				errs[i] = safely(func() error { return f(i) })
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
