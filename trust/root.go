package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"time"

	yamlv2 "go.yaml.in/yaml/v2"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/yamlscan"
)

// MaxRootSize caps a root file that ParseRoot reads: a root of
// MaxRootKeys keys and their delegations takes a fraction of it.
const MaxRootSize = 128 << 10

// MaxRootKeys caps the keys a root may list; ParseRoot refuses more before
// it parses any key.
const MaxRootKeys = 256

// MaxRootChainSize caps the bytes of a whole root chain (root.yaml and
// root/1.yaml … root/N.yaml together) that a reader fetches and Verify
// walks: a thousand versions of a root of a few keys fit, a thousand
// roots of MaxRootSize do not.
const MaxRootChainSize = 16 << 20

// Role names of a root.
const (
	RoleRoot  = "root"
	RoleIndex = "index"
	// RoleQA signs test evidence (package evidence). It is optional: a
	// root without it vouches for no tests, and roots made before it
	// existed read and verify as they did. kubepkg's reader keeps roles it
	// does not use in the map its signatures cover, so a root with it still
	// verifies there.
	RoleQA = "qa"
)

// Root is a version of the root of trust (root.yaml, root/N.yaml): which
// keys sign roots, which sign the index, and which packages are delegated to
// which keys. Signatures cover SignedBytes.
type Root struct {
	Signed     RootSigned        `json:"signed"`
	Signatures []index.Signature `json:"signatures"`
}

// RootSigned is the signed part of a root. Its fields are in the order the
// signatures cover.
type RootSigned struct {
	Version int       `json:"version"`
	Expires time.Time `json:"expires"`
	// Keys maps each keyid to its PEM "PUBLIC KEY".
	Keys map[string]string `json:"keys"`
	// Roles holds the "root" and "index" roles and, optionally, "qa".
	Roles       map[string]Role `json:"roles"`
	Delegations []Delegation    `json:"delegations,omitempty"`
}

// Role is who may sign for a role: threshold of the keys keyids.
type Role struct {
	KeyIDs    []string `json:"keyids"`
	Threshold int      `json:"threshold"`
}

// Delegation gives the packages matching one of its patterns (path.Match
// globs) to its keys: a version of such a package counts only with
// threshold signatures of its version statement.
type Delegation struct {
	Name      string   `json:"name"`
	Packages  []string `json:"packages"`
	KeyIDs    []string `json:"keyids"`
	Threshold int      `json:"threshold"`
}

// RootConfig is the content of a root, with keys parsed.
type RootConfig struct {
	// Expires is when the root stops being trusted (UTC, whole seconds).
	Expires        time.Time
	RootKeys       []*PublicKey
	RootThreshold  int
	IndexKeys      []*PublicKey
	IndexThreshold int
	// QAKeys sign test evidence, QAThreshold of them for one piece; none
	// for a root without a qa role.
	QAKeys      []*PublicKey
	QAThreshold int
	Delegations []DelegationConfig
}

// DelegationConfig is one delegation with keys parsed.
type DelegationConfig struct {
	Name      string
	Packages  []string
	Keys      []*PublicKey
	Threshold int
}

// NewRoot returns version 1 of a root with content c, unsigned.
func NewRoot(c RootConfig) (*Root, error) {
	return c.root(1)
}

// Next returns the version after r with content c, unsigned. It must be
// signed by a threshold of r's root keys and of its own.
func (r *Root) Next(c RootConfig) (*Root, error) {
	return c.root(r.Signed.Version + 1)
}

func (c RootConfig) root(version int) (*Root, error) {
	r := &Root{Signatures: []index.Signature{}}
	s := &r.Signed
	s.Version = version
	if c.Expires.IsZero() {
		return nil, errors.New("root needs an expiry time")
	}
	s.Expires = c.Expires.UTC().Truncate(time.Second)
	s.Keys = map[string]string{}
	role := func(name string, keys []*PublicKey, threshold int) ([]string, error) {
		ids := []string{}
		for _, k := range keys {
			if !slices.Contains(ids, k.KeyID()) {
				ids = append(ids, k.KeyID())
			}
			s.Keys[k.KeyID()] = string(k.PEM())
		}
		sort.Strings(ids)
		if len(ids) == 0 {
			return nil, fmt.Errorf("%s needs at least one key", name)
		}
		if threshold < 1 || threshold > len(ids) {
			return nil, fmt.Errorf("%s threshold is %d with %d keys; it must be 1 to %d", name, threshold, len(ids), len(ids))
		}
		return ids, nil
	}
	s.Roles = map[string]Role{}
	ids, err := role("root role", c.RootKeys, c.RootThreshold)
	if err != nil {
		return nil, err
	}
	s.Roles[RoleRoot] = Role{KeyIDs: ids, Threshold: c.RootThreshold}
	if ids, err = role("index role", c.IndexKeys, c.IndexThreshold); err != nil {
		return nil, err
	}
	s.Roles[RoleIndex] = Role{KeyIDs: ids, Threshold: c.IndexThreshold}
	if len(c.QAKeys) > 0 || c.QAThreshold != 0 {
		if ids, err = role("qa role", c.QAKeys, c.QAThreshold); err != nil {
			return nil, err
		}
		s.Roles[RoleQA] = Role{KeyIDs: ids, Threshold: c.QAThreshold}
	}
	for _, d := range c.Delegations {
		ids, err := role("delegation "+d.Name, d.Keys, d.Threshold)
		if err != nil {
			return nil, err
		}
		s.Delegations = append(s.Delegations, Delegation{Name: d.Name, Packages: slices.Clone(d.Packages), KeyIDs: ids, Threshold: d.Threshold})
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return r, nil
}

// Config returns r's content with keys parsed, to change and pass to Next.
func (r *Root) Config() (RootConfig, error) {
	keys := func(ids []string) ([]*PublicKey, error) {
		var out []*PublicKey
		for _, id := range ids {
			k, err := ParsePublicKey([]byte(r.Signed.Keys[id]))
			if err != nil {
				return nil, fmt.Errorf("key %s: %w", id, err)
			}
			out = append(out, k)
		}
		return out, nil
	}
	c := RootConfig{Expires: r.Signed.Expires}
	var err error
	rr, ir := r.Signed.Roles[RoleRoot], r.Signed.Roles[RoleIndex]
	if c.RootKeys, err = keys(rr.KeyIDs); err != nil {
		return c, err
	}
	c.RootThreshold = rr.Threshold
	if c.IndexKeys, err = keys(ir.KeyIDs); err != nil {
		return c, err
	}
	c.IndexThreshold = ir.Threshold
	if qa, ok := r.Signed.Roles[RoleQA]; ok {
		if c.QAKeys, err = keys(qa.KeyIDs); err != nil {
			return c, err
		}
		c.QAThreshold = qa.Threshold
	}
	for _, d := range r.Signed.Delegations {
		ks, err := keys(d.KeyIDs)
		if err != nil {
			return c, err
		}
		c.Delegations = append(c.Delegations, DelegationConfig{Name: d.Name, Packages: slices.Clone(d.Packages), Keys: ks, Threshold: d.Threshold})
	}
	return c, nil
}

// SignedBytes returns what root signatures cover: the compact
// encoding/json form of Signed (fields in order, map keys sorted).
func (r *Root) SignedBytes() ([]byte, error) {
	return json.Marshal(&r.Signed)
}

// Digest returns "sha256:" and the hex sha256 of SignedBytes: what a
// version of the root is, whatever signatures it carries.
func (r *Root) Digest() (string, error) {
	b, err := r.SignedBytes()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Sign adds s's signature of SignedBytes, replacing an earlier signature
// by the same key.
func (r *Root) Sign(s Signer) error {
	b, err := r.SignedBytes()
	if err != nil {
		return err
	}
	sigs, err := Sign(b, s)
	if err != nil {
		return err
	}
	r.Signatures = index.AddSignature(r.Signatures, sigs[0])
	return nil
}

// Marshal returns r as YAML, in the format of sigs.k8s.io/yaml.
//
// The keys of every mapping are in the byte order encoding/json gives them.
// sigs.k8s.io/yaml orders them with yaml.v2's comparison, which is not
// transitive for keyids such as "5e83…", "53fe…" and "9d6b…", so it wrote
// the same root in different orders from run to run.
func (r *Root) Marshal() ([]byte, error) {
	c := *r
	if c.Signatures == nil {
		c.Signatures = []index.Signature{}
	}
	j, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	var ordered yamlv2.MapSlice // nested mappings decode as MapSlice too
	if err := yamlv2.Unmarshal(j, &ordered); err != nil {
		return nil, err
	}
	return yamlv2.Marshal(ordered)
}

// ParseRoot parses a root file strictly and checks it (see Check). It
// does not check signatures.
func ParseRoot(b []byte) (*Root, error) {
	if len(b) > MaxRootSize {
		return nil, fmt.Errorf("root is %d bytes, more than the %d allowed (MaxRootSize)", len(b), MaxRootSize)
	}
	r := &Root{}
	if err := yamlscan.DecodeStrict(b, "root", r); err != nil {
		return nil, err
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return r, nil
}

// check checks a root's content: version >= 1, an expiry, every key stored
// under its own keyid, the root and index roles and the delegations each
// with known keys and a threshold they can meet, and well-formed
// signatures.
func (r *Root) check() error {
	s := &r.Signed
	if s.Version < 1 {
		return fmt.Errorf("root version is %d, want 1 or more", s.Version)
	}
	if s.Expires.IsZero() {
		return errors.New("root has no expires")
	}
	if len(s.Keys) > MaxRootKeys {
		return fmt.Errorf("root lists %d keys, more than the %d allowed (MaxRootKeys)", len(s.Keys), MaxRootKeys)
	}
	for id, p := range s.Keys {
		k, err := ParsePublicKey([]byte(p))
		if err != nil {
			return fmt.Errorf("root key %s: %w", id, err)
		}
		if k.KeyID() != id {
			return fmt.Errorf("root key stored under keyid %s is key %s; a key must be stored under its own keyid", id, k.KeyID())
		}
	}
	checkRole := func(name string, ids []string, threshold int) error {
		if len(ids) == 0 {
			return fmt.Errorf("%s has no keys", name)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if _, ok := s.Keys[id]; !ok {
				return fmt.Errorf("%s names key %s, which is not in keys", name, id)
			}
			if seen[id] {
				return fmt.Errorf("%s names key %s twice", name, id)
			}
			seen[id] = true
		}
		if threshold < 1 || threshold > len(ids) {
			return fmt.Errorf("%s threshold is %d with %d keys; it must be 1 to %d", name, threshold, len(ids), len(ids))
		}
		return nil
	}
	for name := range s.Roles {
		if name != RoleRoot && name != RoleIndex && name != RoleQA {
			return fmt.Errorf("root has unknown role %q (roles are %s, %s and the optional %s)", name, RoleRoot, RoleIndex, RoleQA)
		}
	}
	if role, ok := s.Roles[RoleQA]; ok {
		if err := checkRole(RoleQA+" role", role.KeyIDs, role.Threshold); err != nil {
			return err
		}
	}
	for _, name := range []string{RoleRoot, RoleIndex} {
		role, ok := s.Roles[name]
		if !ok {
			return fmt.Errorf("root has no %s role", name)
		}
		if err := checkRole(name+" role", role.KeyIDs, role.Threshold); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for i, d := range s.Delegations {
		if err := index.CheckPackageName(d.Name); err != nil {
			return fmt.Errorf("delegation %d: name: %w", i+1, err)
		}
		if names[d.Name] {
			return fmt.Errorf("delegation %s appears twice", d.Name)
		}
		names[d.Name] = true
		if len(d.Packages) == 0 {
			return fmt.Errorf("delegation %s has no package patterns", d.Name)
		}
		for _, p := range d.Packages {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return fmt.Errorf("delegation %s: package pattern %q is not a valid glob", d.Name, p)
			}
		}
		if err := checkRole("delegation "+d.Name, d.KeyIDs, d.Threshold); err != nil {
			return err
		}
	}
	for i, sig := range r.Signatures {
		if err := index.CheckSignature(sig); err != nil {
			return fmt.Errorf("root signature %d: %w", i+1, err)
		}
	}
	return nil
}

// verifiers returns the keys of ids.
func (r *Root) verifiers(ids []string) []Verifier {
	out := make([]Verifier, 0, len(ids))
	for _, id := range ids {
		if k, err := ParsePublicKey([]byte(r.Signed.Keys[id])); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// RoleKeys returns the keys of role and its threshold; ok is false when r
// has no such role (an older root has no RoleQA).
func (r *Root) RoleKeys(role string) (keys []Verifier, threshold int, ok bool) {
	rl, ok := r.Signed.Roles[role]
	if !ok {
		return nil, 0, false
	}
	return r.verifiers(rl.KeyIDs), rl.Threshold, true
}

// SignedBy returns the keyids of the role's keys (RoleRoot, RoleIndex) that
// signed r, and the role's threshold.
func (r *Root) SignedBy(role string) ([]string, int, error) {
	b, err := r.SignedBytes()
	if err != nil {
		return nil, 0, err
	}
	rl := r.Signed.Roles[role]
	return checkSignatures(b, r.Signatures, r.verifiers(rl.KeyIDs)), rl.Threshold, nil
}

// DelegationFor returns the delegation of package name: the first whose
// patterns match it, or nil.
func (r *Root) DelegationFor(name string) *Delegation {
	for i := range r.Signed.Delegations {
		d := &r.Signed.Delegations[i]
		for _, p := range d.Packages {
			if ok, _ := path.Match(p, name); ok {
				return d
			}
		}
	}
	return nil
}
