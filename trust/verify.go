package trust

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxKeptIndexSize caps an index that Verify keeps parsed in memory (without
// DiscardIndex): the base a publish merges over. A parsed index takes
// several times its size in memory, and this keeps a merge within about 1
// GiB; a larger base is refused before anything is parsed or written.
// Verifying with DiscardIndex, and merging through AddVerifiedFunc,
// read indexes up to MaxIndexSize.
const MaxKeptIndexSize = 256 << 20

// maxKept is MaxKeptIndexSize, lowered by tests.
var maxKept = MaxKeptIndexSize

// MaxClockSkew is how far in the future of the reference time an index's
// generated time may be before Verify refuses it.
const MaxClockSkew = 5 * time.Minute

// Trust is what a subscriber is given out of band. Either IndexKeys (the
// index is signed directly by them), or RootKeys or TrustedRoot (the index
// is signed by the index role of the newest root, reached from them by the
// published root chain).
type Trust struct {
	// IndexKeys are the public keys trusted to sign index.yaml, and
	// Threshold how many distinct ones must (0 means 1).
	IndexKeys []*PublicKey
	Threshold int

	// RootKeys are the pinned root keys, and RootThreshold how many must
	// sign root version 1 (0 means 1).
	RootKeys      []*PublicKey
	RootThreshold int
	// TrustedRoot, instead of RootKeys, is a root trusted as it is (for
	// example the publisher's own root.yaml); the chain continues after it.
	TrustedRoot *Root
	// Roots are root/1.yaml … root/N.yaml as published, N being the
	// version of Latest; nil for a file that is missing.
	Roots [][]byte
	// Latest is root.yaml as published. With TrustedRoot and no Latest,
	// the trusted root is the newest.
	Latest []byte
}

// SignedBy returns the Trust that accepts an index signed by any one of
// signers: their public keys as index keys, with a threshold of one. It is
// how a publisher verifies what it signed itself before extending it.
func SignedBy(signers ...Signer) *Trust {
	t := &Trust{IndexKeys: make([]*PublicKey, len(signers))}
	for i, s := range signers {
		t.IndexKeys[i] = s.Public()
	}
	return t
}

func (t *Trust) usesRoot() bool { return len(t.RootKeys) > 0 || t.TrustedRoot != nil }

// State is what a subscriber recorded from the last index it accepted, to
// refuse rollbacks and forks.
type State struct {
	// Generated is the accepted index's generated time.
	Generated time.Time `json:"generated"`
	// RootVersion and RootDigest (Root.Digest) are the accepted root's.
	RootVersion int    `json:"rootVersion,omitempty"`
	RootDigest  string `json:"rootDigest,omitempty"`
}

// ParseState parses a state file (JSON).
func ParseState(b []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	if s.RootVersion < 0 || (s.RootVersion > 0) != (s.RootDigest != "") {
		return nil, errors.New("state file: rootVersion and rootDigest must be set together")
	}
	return &s, nil
}

// Marshal returns the state as indented JSON.
func (s *State) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

// VerifyOptions are the inputs of Verify besides the files.
type VerifyOptions struct {
	// Now is the reference time for expiry (required).
	Now time.Time
	// State, when set, is what was accepted before: an older index or
	// root, or a different root of the same version, is refused.
	State *State
	// AllowExpired reports an expired index or root as a warning instead of
	// refusing it: for re-publishing over a base index (merge), whose
	// expiry is what the new index renews.
	AllowExpired bool
	// DiscardIndex keeps no parsed index: Verified.Index is nil and the
	// result cannot be merged over. Each package is checked as it is
	// decoded and dropped, so verifying an index of 100,000 versions needs
	// little memory beyond its bytes.
	DiscardIndex bool
}

// Verified is the account of an accepted index.
type Verified struct {
	// Index holds the versions a subscriber uses: delegated versions
	// without enough signatures are removed (see Warnings). Nil with
	// DiscardIndex.
	Index *index.RepositoryIndex
	// Packages and Versions count Index.
	Packages, Versions int
	// SignedBy are the trusted keys whose signature of index.yaml is
	// valid, Keys how many keys were trusted and Threshold how many
	// signatures were needed.
	SignedBy  []string
	Keys      int
	Threshold int
	// Generated and Expires are the index's times (Expires zero for never).
	Generated, Expires time.Time
	// Root is the newest root, when a root of trust was used.
	Root *Root
	// Warnings are versions dropped, fields kbuild does not know and,
	// with AllowExpired, expiries.
	Warnings []string
	// LeftOut names the versions ("name version build N") left out
	// because their spec has a field kbuild does not know; an index with
	// such versions can be verified but not merged over, which would drop
	// them.
	LeftOut []string
	// State is what to record for the next verification.
	State State
	// Withdrawn are the index's tombstones (also in Index.Withdrawn).
	Withdrawn []index.Withdrawal

	all  *index.RepositoryIndex // every version, for Merge
	keys *signingKeys           // who may sign the index
}

// Verify checks index.yaml and index.yaml.sig as a subscriber does, in the
// subscriber's order: the root chain from the pinned keys (or trusted
// root, walked version by version with RootChain), the index signatures
// against the index keys and threshold — cheapest first: the signature
// file's form, its key ids, then the signatures over the bytes — and only
// then the index content, its expiry and generated time against opts.Now
// and opts.State, every spec digest, and delegated signatures. Without
// DiscardIndex an index over MaxKeptIndexSize is refused first. A refusal is
// a *VerificationError; other errors are misuse (no reference time).
//
// The returned index shares memory with indexBytes, which must not be
// modified afterwards.
func Verify(indexBytes, sigBytes []byte, trust *Trust, opts VerifyOptions) (*Verified, error) {
	return verify(indexBytes, sigBytes, trust, opts, nil)
}

// verify is Verify; each package that passes its checks is also given to
// each, from the goroutine that decoded it, before it is kept or dropped.
// It runs the subscriber's checks as named steps, in a fixed order, each
// refusing on its own (as go-tuf's trustedmetadata): the inputs, the root
// of trust (resolveKeys), the signatures of the exact bytes
// (checkIndexSignatures), the content package by package (checkContent),
// the index's times (checkTimes), and what a subscriber keeps (keep).
func verify(indexBytes, sigBytes []byte, trust *Trust, opts VerifyOptions, each func(name string, p *index.IndexPackage) error) (*Verified, error) {
	if err := checkVerifyInputs(indexBytes, trust, opts, each); err != nil {
		return nil, err
	}
	res := &Verified{}
	if opts.State != nil {
		res.State = *opts.State
	}

	// 1. The root of trust.
	ks, err := resolveKeys(trust, opts, res)
	if err != nil {
		return nil, err
	}
	res.keys = ks

	// 2. The signatures of the exact bytes, cheapest check first, all
	// before anything of the content is parsed: the signature file's
	// shape, then its key ids against the trusted keys, then the
	// signatures over the bytes. A malformed or foreign signature of a
	// huge index is refused without reading the index.
	if err := checkIndexSignatures(indexBytes, sigBytes, ks, res); err != nil {
		return nil, err
	}

	// 3. The content. Each package is checked as it is decoded: its form,
	// every spec against its digest, and its delegation.
	x, results, err := checkContent(indexBytes, opts, res, each)
	if err != nil {
		return nil, err
	}

	// 4. The index's times: generated, expires, against the reference
	// time and the state accepted before.
	if err := checkTimes(x, trust, opts, res); err != nil {
		return nil, err
	}
	res.Generated, res.Expires = x.Generated, x.Expires
	res.Withdrawn = index.CloneWithdrawals(x.Withdrawn)

	// 5. What a subscriber uses.
	if err := keep(x, results, opts, res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkVerifyInputs refuses a misuse of verify (no reference time, no
// trusted keys) and, when the index is to be kept, an index over
// MaxKeptIndexSize, before anything is read.
func checkVerifyInputs(indexBytes []byte, trust *Trust, opts VerifyOptions, each func(string, *index.IndexPackage) error) error {
	if opts.Now.IsZero() {
		return errors.New("verify needs a reference time")
	}
	if trust == nil || !trust.usesRoot() && len(trust.IndexKeys) == 0 {
		return errors.New("verify needs trusted index keys or root keys")
	}
	if !opts.DiscardIndex && each == nil && len(indexBytes) > maxKept {
		return refuse("index.yaml", ErrBaseTooLarge, "%d bytes is more than the %d an index merged over may have (MaxKeptIndexSize), so only a merge that streams the base takes it", len(indexBytes), maxKept)
	}
	return nil
}

// checkContent decodes the index, checking each package as it is decoded:
// every spec against its digest, then its delegation under res.Root; each
// (when set) is given every package that passes. It returns the parsed
// index (without packages under DiscardIndex) and what a subscriber keeps
// of each package, and records unknown fields in res.
func checkContent(indexBytes []byte, opts VerifyOptions, res *Verified, each func(string, *index.IndexPackage) error) (*index.RepositoryIndex, map[string]pkgResult, error) {
	var mu sync.Mutex
	results := map[string]pkgResult{}
	visit := func(name string, p *index.IndexPackage) (bool, error) {
		if err := checkDigests(name, p); err != nil {
			return false, err
		}
		pr := pkgResult{kept: p, versions: len(p.Versions)}
		if res.Root != nil {
			if d := res.Root.DelegationFor(name); d != nil {
				pr = delegate(name, p, d, res.Root)
			}
		}
		if each != nil {
			if err := each(name, p); err != nil {
				return false, err
			}
		}
		if opts.DiscardIndex {
			pr.kept = nil // its memory is used again
		}
		mu.Lock()
		results[name] = pr
		mu.Unlock()
		return !opts.DiscardIndex, nil
	}
	x, perr := index.ParseIndexFunc(indexBytes, visit) // checks each package before visit
	var ve *VerificationError
	if errors.As(perr, &ve) {
		return nil, nil, perr
	}
	if perr != nil {
		return nil, nil, refuse("index.yaml", ErrMalformed, "%v", perr)
	}
	for _, u := range x.Unknown {
		res.Warnings = append(res.Warnings, u.String())
		if u.Dropped {
			res.LeftOut = append(res.LeftOut, fmt.Sprintf("%s %s build %d", u.Package, u.Version, u.Build))
		}
	}
	res.LeftOut = slices.Compact(res.LeftOut)
	return x, results, nil
}

// checkDigests refuses a package with a version whose spec does not match
// its digest.
func checkDigests(name string, p *index.IndexPackage) error {
	for i := range p.Versions {
		v := &p.Versions[i]
		if d, _ := v.Spec.Digest(); d != v.Digest {
			return refuse(fmt.Sprintf("%s %s build %d", name, v.Version, v.Build), ErrDigest,
				"spec does not match its digest: the entry says %s, the spec is %s; %s", v.Digest, d, spec.DigestMismatchReason(&v.Spec, v.Digest))
		}
	}
	return nil
}

// checkTimes checks the index's generated and expires times against
// opts.Now and opts.State: an index from the future, one without expiry
// under a root, an expired one (a warning with AllowExpired) and one older
// than the state accepted before (a rollback) are refused. It records the
// newer generated time in res.State.
func checkTimes(x *index.RepositoryIndex, trust *Trust, opts VerifyOptions, res *Verified) error {
	if x.Generated.IsZero() {
		res.Warnings = append(res.Warnings, "index.yaml: no generated time (kubepkg accepts that; kbuild always writes one, and without it a subscriber cannot tell an older index from a newer one)")
	}
	if x.Generated.After(opts.Now.Add(MaxClockSkew)) {
		return refuse("index.yaml", ErrFuture, "generated %s is in the future (reference time %s); check the publisher's SOURCE_DATE_EPOCH and clocks", fmtTime(x.Generated), fmtTime(opts.Now))
	}
	if trust.usesRoot() && x.Expires.IsZero() {
		return refuse("index.yaml", ErrNoExpiry, "index has no expires; under a root of trust every index must expire")
	}
	if !x.Expires.IsZero() && !opts.Now.Before(x.Expires) {
		msg := fmt.Sprintf("index expired at %s (reference time %s); the publisher must re-sign it", fmtTime(x.Expires), fmtTime(opts.Now))
		if !opts.AllowExpired {
			return refuse("index.yaml", ErrIndexExpired, "%s", msg)
		}
		res.Warnings = append(res.Warnings, "index.yaml: "+msg)
	}
	if opts.State != nil && x.Generated.Before(opts.State.Generated) {
		return refuse("index.yaml", ErrRollback, "index generated %s is older than the index accepted before (generated %s): refusing a rollback", fmtTime(x.Generated), fmtTime(opts.State.Generated))
	}
	if opts.State == nil || x.Generated.After(res.State.Generated) {
		res.State.Generated = x.Generated
	}
	return nil
}

// keep fills in what a subscriber uses of the checked index: the release
// sets checked (unless DiscardIndex), the counts, each package's warnings,
// and the index without the delegated versions that lack signatures (a
// copy of x's package map, made only when a package changed).
func keep(x *index.RepositoryIndex, results map[string]pkgResult, opts VerifyOptions, res *Verified) error {
	names := make([]string, 0, len(results))
	for name := range results {
		names = append(names, name)
	}
	sort.Strings(names)
	if !opts.DiscardIndex {
		if err := x.CheckSets(true); err != nil {
			return refuse("index.yaml", ErrMalformed, "%v", err)
		}
		res.all = x
		res.Index = x
	}
	for _, name := range names {
		pr := results[name]
		res.Warnings = append(res.Warnings, pr.warnings...)
		if pr.versions > 0 {
			res.Packages++
			res.Versions += pr.versions
		}
		if res.Index != nil && pr.changed {
			if res.Index == x {
				cp := *x
				cp.Packages = maps.Clone(x.Packages)
				res.Index = &cp
			}
			if pr.kept == nil {
				delete(res.Index.Packages, name)
			} else {
				res.Index.Packages[name] = pr.kept
			}
		}
	}
	return nil
}

// signingKeys are the keys whose signatures of index.yaml count, and what
// a refusal says about the others.
type signingKeys struct {
	keys      []Verifier
	threshold int
	distinct  int
	// anyKeyID is set for plain index keys (no root): kubepkg then tries
	// every signature of the file against every key, whatever keyid it
	// names; under a root only signatures naming a key of the index role
	// (or naming none) count.
	anyKeyID bool
	// root is the newest root's version, rootRole its root role's keyids
	// and formerIndex the keyids of index roles of earlier versions, each
	// with the last version that had it (root mode only).
	root        int
	rootRole    []Verifier
	formerIndex map[string]formerKey
}

// formerKey is a key of the index role of an earlier root: the last
// version that had it.
type formerKey struct {
	version int
	key     Verifier
}

// resolveKeys walks the root of trust (when trust has one) and returns the
// keys that may sign the index, recording the root in res.
func resolveKeys(trust *Trust, opts VerifyOptions, res *Verified) (*signingKeys, error) {
	ks := &signingKeys{threshold: trust.Threshold}
	if trust.usesRoot() {
		root, former, warnings, err := walkRoots(trust, opts)
		if err != nil {
			return nil, err
		}
		res.Root = root
		res.Warnings = append(res.Warnings, warnings...)
		role := root.Signed.Roles[RoleIndex]
		ks.keys = root.verifiers(role.KeyIDs)
		ks.threshold = role.Threshold
		ks.root = root.Signed.Version
		ks.rootRole = root.verifiers(root.Signed.Roles[RoleRoot].KeyIDs)
		ks.formerIndex = former
		d, err := root.Digest()
		if err != nil {
			return nil, err
		}
		res.State.RootVersion, res.State.RootDigest = root.Signed.Version, d
	} else {
		if opts.State != nil && opts.State.RootVersion > 0 {
			return nil, refuse("index.yaml", ErrRootChain, "the state was recorded under root version %d, but no root of trust was given; verify with the root keys", opts.State.RootVersion)
		}
		for _, k := range trust.IndexKeys {
			ks.keys = append(ks.keys, k)
		}
		if ks.threshold == 0 {
			ks.threshold = 1
		}
		ks.anyKeyID = true
	}
	distinct := map[string]bool{}
	for _, k := range ks.keys {
		distinct[k.KeyID()] = true
	}
	ks.distinct = len(distinct)
	res.Keys, res.Threshold = ks.distinct, ks.threshold
	if ks.threshold < 1 || ks.threshold > ks.distinct {
		return nil, fmt.Errorf("threshold %d cannot be met by %d trusted keys", ks.threshold, ks.distinct)
	}
	return ks, nil
}

// indexSigFile names the signature file in refusals.
const indexSigFile = "index.yaml.sig"

// PrecheckIndexSignature checks index.yaml.sig as far as it can be checked
// without the index: the root chain (when trust has one), the file's form,
// and that enough of its signatures name trusted keys. A reader calls it
// before it reads a large index, so that a missing, malformed or foreign
// signature is refused without the index in memory; Verify checks all of
// it again over the bytes. A refusal is a *VerificationError.
func PrecheckIndexSignature(sigBytes []byte, trust *Trust, opts VerifyOptions) error {
	if trust == nil || !trust.usesRoot() && len(trust.IndexKeys) == 0 {
		return errors.New("verify needs trusted index keys or root keys")
	}
	ks, err := resolveKeys(trust, opts, &Verified{})
	if err != nil {
		return err
	}
	_, err = precheckSignatures(sigBytes, ks)
	return err
}

// precheckSignatures parses sigBytes and refuses it when fewer than the
// threshold of its signatures could be by the trusted keys, saying whose
// they are.
func precheckSignatures(sigBytes []byte, ks *signingKeys) ([]index.Signature, error) {
	const redo = "kubepkg reads the signature only from index.yaml.sig and refuses the index without a good one there, whatever else the site holds"
	if len(sigBytes) == 0 {
		return nil, refuse("index.yaml", ErrNotSigned, "index is not signed by a trusted key: %s is missing or empty; %s: upload index.yaml.sig together with index.yaml, or publish again", indexSigFile, redo)
	}
	sigs, err := index.ParseSignatures(sigBytes)
	if err != nil {
		return nil, refuse("index.yaml", ErrNotSigned, "index is not signed by a trusted key: %s is malformed: %v; %s: upload the index.yaml.sig that was published with index.yaml, or publish again", indexSigFile, err, redo)
	}
	if ks.anyKeyID {
		if len(sigs) < ks.threshold {
			return nil, refuse("index.yaml", ErrNotSigned, "index is not signed by a trusted key: %s has %d signature(s), %d needed", indexSigFile, len(sigs), ks.threshold)
		}
		return sigs, nil
	}
	trusted := map[string]bool{}
	for _, k := range ks.keys {
		trusted[k.KeyID()] = true
	}
	candidates := map[string]bool{}
	for i, sg := range sigs {
		switch {
		case sg.KeyID == "":
			candidates["#"+strconv.Itoa(i)] = true // tried against every key
		case trusted[sg.KeyID]:
			candidates[sg.KeyID] = true
		}
	}
	if len(candidates) < ks.threshold {
		return nil, refuse("index.yaml", ErrIndexNotSigned, "index is not signed by a trusted key: %s has %d signature(s)%s, %d of them by the %d key(s) of the index role of root version %d (%s), %d needed%s; sign the index with a current index key",
			indexSigFile, len(sigs), sigKeyIDs(sigs), len(candidates), ks.distinct, ks.root, shortIDs(ks.keys), ks.threshold, ks.whoSigned(sigs, trusted, nil))
	}
	return sigs, nil
}

// whoSigned says whose the signatures by keys that do not count are (a
// root key, or an index key of an earlier root: rotated out), by keyid or,
// given the index bytes, by trying the keys.
func (ks *signingKeys) whoSigned(sigs []index.Signature, trusted map[string]bool, indexBytes []byte) string {
	var out []string
	for _, sg := range sigs {
		if trusted[sg.KeyID] || ks.root == 0 {
			continue
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(sg.Sig)
		if err != nil {
			continue
		}
		made := func(k Verifier) bool {
			return k.KeyID() == sg.KeyID || sg.KeyID == "" && indexBytes != nil && k.Verify(indexBytes, raw)
		}
		found := false
		for _, k := range ks.rootRole {
			if made(k) && !found {
				found = true
				out = append(out, fmt.Sprintf("keyid %s is a root key of root version %d: root keys sign roots, and kubepkg counts only the index role's keys for index.yaml", short(k.KeyID()), ks.root))
			}
		}
		for _, id := range slices.Sorted(maps.Keys(ks.formerIndex)) {
			if f := ks.formerIndex[id]; made(f.key) && !found {
				found = true
				out = append(out, fmt.Sprintf("keyid %s was an index key up to root version %d and was rotated out: kubepkg counts only the index role of the newest root (version %d)", short(id), f.version, ks.root))
			}
		}
		if !found && sg.KeyID != "" {
			out = append(out, fmt.Sprintf("keyid %s is no key of root version %d", short(sg.KeyID), ks.root))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// checkIndexSignatures refuses index bytes that lack threshold valid
// signatures by the keys, in order of cost, and records who signed in res.
func checkIndexSignatures(indexBytes, sigBytes []byte, ks *signingKeys, res *Verified) error {
	sigs, err := precheckSignatures(sigBytes, ks)
	if err != nil {
		return err
	}
	res.SignedBy = ks.check(indexBytes, sigs)
	if len(res.SignedBy) < ks.threshold {
		trusted := map[string]bool{}
		for _, id := range res.SignedBy {
			trusted[id] = true
		}
		if who := ks.whoSigned(sigs, trusted, indexBytes); who != "" {
			return refuse("index.yaml", ErrIndexNotSigned, "index is not signed by a trusted key: %d valid signature(s) by the %d key(s) of the index role (%s), %d needed; %s has %d signature(s)%s%s; sign the index with a current index key",
				len(res.SignedBy), ks.distinct, shortIDs(ks.keys), ks.threshold, indexSigFile, len(sigs), sigKeyIDs(sigs), who)
		}
		return refuse("index.yaml", ErrNotSigned, "index is not signed by a trusted key: %d valid signature(s) by the %d trusted key(s) (%s), %d needed; %s has %d signature(s)%s — index.yaml was changed after signing, the signature is for other bytes (an index.yaml and index.yaml.sig of different publishes?), or it was made by another key; upload the index.yaml.sig published with this index.yaml, or publish again",
			len(res.SignedBy), ks.distinct, shortIDs(ks.keys), ks.threshold, indexSigFile, len(sigs), sigKeyIDs(sigs))
	}
	return nil
}

// check returns the keyids of the keys with a valid signature of message
// in sigs, as kubepkg counts them.
func (ks *signingKeys) check(message []byte, sigs []index.Signature) []string {
	if ks.anyKeyID {
		anon := make([]index.Signature, len(sigs))
		for i, s := range sigs {
			anon[i] = index.Signature{Sig: s.Sig}
		}
		sigs = anon
	}
	return checkSignatures(message, sigs, ks.keys)
}

// CheckSignatureFile checks that sigBytes, another signature file of the
// index v was verified from (by-hash/sha256/<hex>.sig), carries the
// threshold of signatures of indexBytes by the keys that verified it. It is
// an extra check for readers that use that file, never a substitute for
// index.yaml.sig. A refusal is a *VerificationError naming what.
func (v *Verified) CheckSignatureFile(indexBytes, sigBytes []byte, what string) error {
	if v.keys == nil {
		return errors.New("CheckSignatureFile needs a result of Verify")
	}
	sigs, err := index.ParseSignatures(sigBytes)
	if err != nil {
		return refuse(what, ErrNotSigned, "malformed: %v; it must hold the signature of index.yaml (publish again to rewrite it)", err)
	}
	if got := v.keys.check(indexBytes, sigs); len(got) < v.keys.threshold {
		return refuse(what, ErrNotSigned, "holds %d valid signature(s) of index.yaml by the trusted keys (%s), %d needed, although index.yaml.sig is good: a reader that fetches the signature by digest refuses this index; publish again to rewrite it", len(got), shortIDs(v.keys.keys), v.keys.threshold)
	}
	return nil
}

// pkgResult is what a subscriber keeps of one package.
type pkgResult struct {
	kept     *index.IndexPackage // nil when no version is left, or with DiscardIndex
	versions int                 // versions kept
	changed  bool                // versions were dropped
	warnings []string
}

// delegate keeps the versions of p that carry the delegation's threshold
// of signatures of their version statement.
func delegate(name string, p *index.IndexPackage, d *Delegation, root *Root) pkgResult {
	keys := root.verifiers(d.KeyIDs)
	kept := *p
	kept.Versions = nil
	var pr pkgResult
	for _, v := range p.Versions {
		got := checkSignatures(VersionStatement(name, v.Version, v.Build, v.Digest), v.Signatures, keys)
		if len(got) >= d.Threshold {
			kept.Versions = append(kept.Versions, v)
			continue
		}
		pr.changed = true
		pr.warnings = append(pr.warnings, fmt.Sprintf("%s %s build %d dropped: delegation %s needs %d signature(s) of the version by its keys (%s), it has %d valid; sign the build record with a key of the delegation and publish again",
			name, v.Version, v.Build, d.Name, d.Threshold, shortIDs(keys), len(got)))
	}
	pr.versions = len(kept.Versions)
	if !pr.changed {
		pr.kept = p
	} else if len(kept.Versions) > 0 {
		pr.kept = &kept
	}
	return pr
}

// walkRoots verifies the root chain and returns the newest root and the
// keyids that earlier roots of the chain had in their index role and the
// newest has not, each with the last version that had it.
func walkRoots(t *Trust, opts VerifyOptions) (*Root, map[string]formerKey, []string, error) {
	root, c, warnings, err := walkChain(t, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	former := map[string]formerKey{}
	if c != nil {
		for id, f := range c.indexKeys {
			if f.version < root.Signed.Version {
				former[id] = f
			}
		}
	}
	return root, former, warnings, nil
}

// walkChain verifies the root chain and returns the newest root and the
// chain walked (nil when only the trusted root was given).
func walkChain(t *Trust, opts VerifyOptions) (*Root, *RootChain, []string, error) {
	var warnings []string
	if t.Latest == nil && t.TrustedRoot != nil {
		// Nothing published beside the index: the trusted root is the
		// newest.
		r, w, err := checkFinalRoot(t.TrustedRoot, opts, warnings)
		return r, nil, w, err
	}
	if t.Latest == nil {
		return nil, nil, nil, refuse("root.yaml", ErrRootChain, "root.yaml is missing; a site verified with root keys publishes root.yaml and root/1.yaml … root/N.yaml")
	}
	latest, err := ParseRoot(t.Latest)
	if err != nil {
		return nil, nil, nil, refuse("root.yaml", ErrMalformed, "%v", err)
	}
	n := latest.Signed.Version
	total := len(t.Latest)
	for _, b := range t.Roots {
		total += len(b)
	}
	if total > MaxRootChainSize {
		return nil, nil, nil, refuse("root.yaml", ErrTooLarge, "the root chain (root.yaml and root/1.yaml … root/%d.yaml) is %d bytes, more than the %d a reader accepts (MaxRootChainSize); a root of trust needs a few KiB a version", n, total, MaxRootChainSize)
	}
	if len(t.Roots) < n {
		return nil, nil, nil, refuse(fmt.Sprintf("root/%d.yaml", len(t.Roots)+1), ErrRootChain, "missing: root.yaml is version %d, so root/1.yaml … root/%d.yaml must all be published", n, n)
	}
	c := NewRootChain(t, opts)
	for v := c.Next(); v <= n; v = c.Next() {
		if t.Roots[v-1] == nil {
			return nil, nil, nil, refuse(fmt.Sprintf("root/%d.yaml", v), ErrRootChain, "missing: the root chain skips version %d (root.yaml is version %d)", v, n)
		}
		if err := c.Add(t.Roots[v-1]); err != nil {
			return nil, nil, nil, err
		}
	}
	prev := c.Last()
	final := prev
	if final == nil {
		return nil, nil, nil, refuse("root/1.yaml", ErrRootChain, "no root is published")
	}
	if final.Signed.Version == n {
		fd, _ := final.Digest()
		if ld, _ := latest.Digest(); ld != fd {
			return nil, nil, nil, refuse("root.yaml", ErrFork, "version %d (%s) differs from root/%d.yaml (%s): the site publishes two roots of one version", n, ld, n, fd)
		}
	}
	r, w, err := checkFinalRoot(final, opts, warnings)
	return r, c, w, err
}

// RootChain checks a published root chain one version at a time, so that a
// client fetching root/1.yaml, root/2.yaml, … stops at the first bad one
// instead of fetching the whole chain first. Verify walks the chain the same
// way.
type RootChain struct {
	t     *Trust
	opts  VerifyOptions
	prev  *Root
	start int // the trusted root's version, or 0
	next  int
	// indexKeys are the keyids of the index roles of the roots accepted,
	// each with the last version that had it.
	indexKeys map[string]formerKey
}

// NewRootChain starts a chain from t's pinned root keys (at version 1) or
// its trusted root (at the trusted root's version, which must be
// republished unchanged). opts.State, when set, refuses forks.
func NewRootChain(t *Trust, opts VerifyOptions) *RootChain {
	c := &RootChain{t: t, opts: opts, next: 1, indexKeys: map[string]formerKey{}}
	if t.TrustedRoot != nil {
		c.prev, c.start = t.TrustedRoot, t.TrustedRoot.Signed.Version
		c.next = max(c.start, 1)
		c.noteIndexKeys(c.prev)
	}
	return c
}

// Next is the version the next Add must be.
func (c *RootChain) Next() int { return c.next }

// Last is the newest root accepted so far: nil before the first Add
// without a trusted root.
func (c *RootChain) Last() *Root { return c.prev }

// Add checks b as root version Next(): its form, its version number, that
// it is signed by the previous root's root keys (or the pinned keys) and by
// its own. A refusal is a *VerificationError; after one the chain must not
// be used.
func (c *RootChain) Add(b []byte) error {
	v := c.next
	what := fmt.Sprintf("root/%d.yaml", v)
	r, err := ParseRoot(b)
	if err != nil {
		return refuse(what, ErrMalformed, "%v", err)
	}
	if got := r.Signed.Version; got != v {
		kind := "skips"
		if got < v {
			kind = "repeats"
		}
		return refuse(what, ErrRootChain, "has version %d, want %d: the root chain %s a version", got, v, kind)
	}
	d, err := r.Digest()
	if err != nil {
		return err
	}
	if s := c.opts.State; s != nil && s.RootVersion == v && s.RootDigest != d {
		return refuse(what, ErrFork, "root version %d is %s, but the version %d accepted before is %s: the root chain forked", v, d, v, s.RootDigest)
	}
	c.next++
	if v == c.start {
		if td, _ := c.prev.Digest(); td != d {
			return refuse(what, ErrFork, "root version %d is %s, but the trusted root of that version is %s: the root chain forked", v, d, td)
		}
		return nil
	}
	if err := checkRootSigs(r, c.prev, c.t); err != nil {
		return err
	}
	c.prev = r
	c.noteIndexKeys(r)
	return nil
}

func (c *RootChain) noteIndexKeys(r *Root) {
	for _, k := range r.verifiers(r.Signed.Roles[RoleIndex].KeyIDs) {
		c.indexKeys[k.KeyID()] = formerKey{r.Signed.Version, k}
	}
}

// checkFinalRoot refuses a newest root older than the recorded one, or
// expired.
func checkFinalRoot(final *Root, opts VerifyOptions, warnings []string) (*Root, []string, error) {
	if s := opts.State; s != nil && final.Signed.Version < s.RootVersion {
		return nil, nil, refuse("root.yaml", ErrRollback, "root version %d is older than the version %d accepted before: refusing a rollback", final.Signed.Version, s.RootVersion)
	}
	if s := opts.State; s != nil && final.Signed.Version == s.RootVersion {
		if d, _ := final.Digest(); d != s.RootDigest {
			return nil, nil, refuse("root.yaml", ErrFork, "root version %d is %s, but the version %d accepted before is %s: the root chain forked", final.Signed.Version, d, final.Signed.Version, s.RootDigest)
		}
	}
	if !opts.Now.Before(final.Signed.Expires) {
		msg := fmt.Sprintf("root version %d expired at %s (reference time %s); the root key holders must publish the next version", final.Signed.Version, fmtTime(final.Signed.Expires), fmtTime(opts.Now))
		if !opts.AllowExpired {
			return nil, nil, refuse("root.yaml", ErrRootExpired, "%s", msg)
		}
		warnings = append(warnings, "root.yaml: "+msg)
	}
	return final, warnings, nil
}

// checkRootSigs checks that root r carries the threshold of the previous
// root's root role (or, for version 1, of the pinned keys) and of its own.
func checkRootSigs(r, prev *Root, t *Trust) error {
	what := fmt.Sprintf("root/%d.yaml", r.Signed.Version)
	b, err := r.SignedBytes()
	if err != nil {
		return err
	}
	if prev == nil {
		var pinned []Verifier
		for _, k := range t.RootKeys {
			pinned = append(pinned, k)
		}
		need := t.RootThreshold
		if need == 0 {
			need = 1
		}
		if got := checkSignatures(b, r.Signatures, pinned); len(got) < need {
			return refuse(what, ErrNotSigned, "root version 1 is not signed by the pinned root keys: %d valid signature(s) by %s, %d needed", len(got), shortIDs(pinned), need)
		}
	} else {
		role := prev.Signed.Roles[RoleRoot]
		ks := prev.verifiers(role.KeyIDs)
		if got := checkSignatures(b, r.Signatures, ks); len(got) < role.Threshold {
			return refuse(what, ErrRootNotSigned, "root version %d is not signed by the root keys of version %d: %d valid signature(s) by %s, %d needed; the previous root's keys must sign a new root",
				r.Signed.Version, prev.Signed.Version, len(got), shortIDs(ks), role.Threshold)
		}
	}
	role := r.Signed.Roles[RoleRoot]
	ks := r.verifiers(role.KeyIDs)
	if got := checkSignatures(b, r.Signatures, ks); len(got) < role.Threshold {
		return refuse(what, ErrNotSigned, "root version %d is not signed by its own root keys: %d valid signature(s) by %s, %d needed",
			r.Signed.Version, len(got), shortIDs(ks), role.Threshold)
	}
	return nil
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func shortIDs(keys []Verifier) string {
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, short(k.KeyID()))
	}
	return "keyids " + strings.Join(ids, ", ")
}

func sigKeyIDs(sigs []index.Signature) string {
	var ids []string
	for _, s := range sigs {
		if s.KeyID != "" {
			ids = append(ids, short(s.KeyID))
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return " by keyids " + strings.Join(ids, ", ")
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// checkMergeable refuses merging over an index whose versions were left
// out for fields kbuild does not know: the merged index would drop them.
func (v *Verified) checkMergeable() error {
	if len(v.LeftOut) == 0 {
		return nil
	}
	return fmt.Errorf("the base index has versions with fields this kbuild does not know (%s); merging would drop them from the published index: publish with a kbuild that knows those fields", strings.Join(v.LeftOut, ", "))
}
