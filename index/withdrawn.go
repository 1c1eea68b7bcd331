package index

import (
	"cmp"
	"errors"
	"fmt"
	"kbuild.dev/kbuild/spec"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxReasonSize caps the reason of a withdrawal.
const MaxReasonSize = 500

// Withdrawal is a tombstone: a version and build taken out of the index,
// kept so that the same version and build can never be published again
// (with other content or the same). The index lists them under
// "withdrawn:", beside "packages:"; readers that do not know the key
// (kubepkg's, which decodes the index leniently) ignore it, and the
// signature covers it like the rest of the file.
type Withdrawal struct {
	Build int `json:"build"`
	// Digest is the spec digest the version had.
	Digest  string `json:"digest"`
	Package string `json:"package"`
	// Reason says why, for people: one line of printable text.
	Reason  string `json:"reason"`
	Version string `json:"version"`
	// Withdrawn is the generated time of the first index without it.
	Withdrawn time.Time `json:"withdrawn"`
}

// String is "name version build N".
func (w *Withdrawal) String() string {
	return fmt.Sprintf("%s %s build %d", w.Package, w.Version, w.Build)
}

// ErrNotPublished is wrapped by Withdraw's error for a version the index
// does not hold.
var ErrNotPublished = errors.New("not published")

// ErrSignedRelocation is wrapped by the error about a relocation (Relocate)
// of a version that carries delegated signatures: they cover the digest a
// move would change.
var ErrSignedRelocation = errors.New("refusing to relocate")

// WithdrawnError is returned when a record names a withdrawn version.
type WithdrawnError struct {
	Origin     string
	Withdrawal Withdrawal
}

func (e *WithdrawnError) Error() string {
	return fmt.Sprintf("%s: %s was withdrawn on %s (%s) and cannot be published again; give the recipe a new build number",
		e.Origin, e.Withdrawal.String(), e.Withdrawal.Withdrawn.Format(time.DateOnly), e.Withdrawal.Reason)
}

// CheckReason checks the reason of a withdrawal: one line of printable
// text of at most MaxReasonSize bytes.
func CheckReason(reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return errors.New("a withdrawal needs a reason")
	case len(reason) > MaxReasonSize:
		return fmt.Errorf("the reason is %d bytes; at most %d", len(reason), MaxReasonSize)
	case !utf8.ValidString(reason):
		return errors.New("the reason is not UTF-8")
	}
	for _, r := range reason {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return fmt.Errorf("the reason holds %q: use one line of printable ASCII", r)
		}
	}
	return nil
}

func (w *Withdrawal) check() error {
	if err := CheckPackageName(w.Package); err != nil {
		return fmt.Errorf("withdrawn: %w", err)
	}
	if _, err := spec.ParseSemver(w.Version); err != nil {
		return fmt.Errorf("withdrawn %s: %w", w, err)
	}
	if w.Build < 1 {
		return fmt.Errorf("withdrawn %s: build must be at least 1", w)
	}
	if err := checkDigest(w.Digest); err != nil {
		return fmt.Errorf("withdrawn %s: %w", w, err)
	}
	if err := CheckReason(w.Reason); err != nil {
		return fmt.Errorf("withdrawn %s: %w", w, err)
	}
	if w.Withdrawn.IsZero() {
		return fmt.Errorf("withdrawn %s: no withdrawn time", w)
	}
	return nil
}

func compareWithdrawals(a, b Withdrawal) int {
	return cmp.Or(strings.Compare(a.Package, b.Package), strings.Compare(a.Version, b.Version), cmp.Compare(a.Build, b.Build))
}

// checkWithdrawn checks the tombstones of x: well formed, sorted, no
// version twice, none also among the packages.
func (x *RepositoryIndex) checkWithdrawn() error {
	for i := range x.Withdrawn {
		w := &x.Withdrawn[i]
		if err := w.check(); err != nil {
			return err
		}
		if i > 0 && compareWithdrawals(x.Withdrawn[i-1], *w) >= 0 {
			return fmt.Errorf("withdrawn: %s is out of order or twice", w)
		}
		if x.Find(w.Package, w.Version, w.Build) != nil {
			return fmt.Errorf("%s is both published and withdrawn", w)
		}
	}
	return nil
}

// writeWithdrawn writes "withdrawn:" and its list, from the start of a line.
func writeWithdrawn(w *ywriter, list []Withdrawal) error {
	if len(list) == 0 {
		return nil
	}
	w.Key(0, "withdrawn")
	for i := range list {
		t := &list[i]
		w.Item(0)
		w.Mapping(2, func(col int) {
			w.Key(col, "build")
			w.Int(t.Build)
			w.FieldStr(col, "digest", t.Digest)
			w.FieldStr(col, "package", t.Package)
			w.FieldStr(col, "reason", t.Reason)
			w.FieldStr(col, "version", t.Version)
			w.FieldStr(col, "withdrawn", t.Withdrawn.UTC().Format(time.RFC3339Nano))
		})
	}
	if w.Slow {
		return errors.New("index: withdrawn: reasons must be one line of printable ASCII")
	}
	return nil
}

func readWithdrawn(r *yreader) ([]Withdrawal, error) {
	var out []Withdrawal
	_, err := r.ReadSeq(func() error {
		out = append(out, Withdrawal{})
		t := &out[len(out)-1]
		_, err := r.ReadMap(func(k string) error {
			var err error
			switch k {
			case "build":
				t.Build, err = r.ReadInt(k)
			case "digest":
				t.Digest, err = r.ReadString(k)
			case "package":
				t.Package, err = r.ReadString(k)
			case "reason":
				t.Reason, err = r.ReadString(k)
			case "version":
				t.Version, err = r.ReadString(k)
			case "withdrawn":
				t.Withdrawn, err = r.ReadTime(k)
			default:
				err = r.unknown("withdrawn", k)
			}
			return err
		})
		return err
	})
	return out, err
}

// CloneWithdrawals copies list so that it shares no memory with the text
// it was parsed from.
func CloneWithdrawals(list []Withdrawal) []Withdrawal {
	out := slices.Clone(list)
	for i := range out {
		t := &out[i]
		t.Package, t.Version, t.Digest, t.Reason = strings.Clone(t.Package), strings.Clone(t.Version), strings.Clone(t.Digest), strings.Clone(t.Reason)
	}
	return out
}

// Withdraw takes version and build of package name out of b and records
// a tombstone with reason, dated at: the index b writes next no longer
// offers the version, and Add refuses it from then on. It returns the
// tombstone, or an error when the version is not in b.
func (b *Builder) Withdraw(name, version string, build int, reason string, at time.Time) (*Withdrawal, error) {
	if err := CheckReason(reason); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := withdrawnKey{name, version, build}
	if t := b.withdrawn[k]; t != nil {
		return nil, fmt.Errorf("%s is already withdrawn (%s)", t, t.Reason)
	}
	p := b.pkgs[name]
	var bv *builtVersion
	if p != nil {
		bv = p.versions[versionKey{version, build}]
	}
	if bv == nil {
		return nil, fmt.Errorf("%s %s build %d is not in the index; nothing to withdraw: %w", name, version, build, ErrNotPublished)
	}
	delete(p.versions, versionKey{version, build})
	if len(p.versions) == 0 {
		delete(b.pkgs, name)
	}
	t := &Withdrawal{Package: name, Version: version, Build: build, Digest: bv.v.Digest, Reason: reason, Withdrawn: at.UTC().Truncate(time.Second)}
	b.addWithdrawn(t)
	return t, nil
}

// Withdrawn returns the tombstone of version and build of package name,
// or nil.
func (b *Builder) Withdrawn(name, version string, build int) *Withdrawal {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.withdrawn[withdrawnKey{name, version, build}]
}

type withdrawnKey struct {
	name, version string
	build         int
}

// addWithdrawn records t; b.mu is held.
func (b *Builder) addWithdrawn(t *Withdrawal) {
	if b.withdrawn == nil {
		b.withdrawn = map[withdrawnKey]*Withdrawal{}
	}
	b.withdrawn[withdrawnKey{t.Package, t.Version, t.Build}] = t
}

// withdrawals returns the tombstones sorted; b.mu is held.
func (b *Builder) withdrawals() []Withdrawal {
	out := make([]Withdrawal, 0, len(b.withdrawn))
	for _, t := range b.withdrawn {
		out = append(out, *t)
	}
	slices.SortFunc(out, compareWithdrawals)
	return out
}

// KeepWithdrawn records the tombstone t, taken from another index of the
// same repository (another suite's): a version withdrawn there is
// withdrawn here too, removed from b if b holds it. It returns whether b
// held the version. A tombstone b has already is left as it is.
func (b *Builder) KeepWithdrawn(t Withdrawal) (removed bool, err error) {
	if err := t.check(); err != nil {
		return false, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := withdrawnKey{t.Package, t.Version, t.Build}
	if b.withdrawn[k] != nil {
		return false, nil
	}
	if p := b.pkgs[t.Package]; p != nil {
		vk := versionKey{t.Version, t.Build}
		if bv := p.versions[vk]; bv != nil {
			if bv.v.Digest != t.Digest {
				return false, fmt.Errorf("%s was withdrawn with digest %s, but this index has it with %s: the indexes are not of one repository", t.String(), t.Digest, bv.v.Digest)
			}
			delete(p.versions, vk)
			if len(p.versions) == 0 {
				delete(b.pkgs, t.Package)
			}
			removed = true
		}
	}
	c := Withdrawal{Build: t.Build, Digest: strings.Clone(t.Digest), Package: strings.Clone(t.Package), Reason: strings.Clone(t.Reason),
		Version: strings.Clone(t.Version), Withdrawn: t.Withdrawn.UTC()} // t may share memory with a parsed index
	b.addWithdrawn(&c)
	return removed, nil
}

// FindWithdrawn returns the tombstone of name version build in x, or nil
// when x has not withdrawn it.
func (x *RepositoryIndex) FindWithdrawn(name, version string, build int) *Withdrawal {
	for i := range x.Withdrawn {
		if w := &x.Withdrawn[i]; w.Package == name && w.Build == build && spec.SameVersion(w.Version, version) {
			return w
		}
	}
	return nil
}
