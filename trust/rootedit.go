package trust

// Editing a root's configuration and its delegations, as kbuild trust
// root new and next do. This file belongs to package trust (the split of
// index moves it there).

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RootEdit is a change to a root's content. Key files may be public keys
// or private keys, of which only the public half is used. Delegations are
// written as on kbuild trust root's command line: NAME=PATTERN[,PATTERN],
// NAME=FILE and NAME=N.
type RootEdit struct {
	// RootKeys replace the root keys when not empty; IndexKeys the index
	// keys; QAKeys the qa keys (adding the qa role, with threshold 1 when
	// the root had none).
	RootKeys, IndexKeys, QAKeys []string
	// RootThreshold, IndexThreshold and QAThreshold set a threshold when
	// not nil.
	RootThreshold, IndexThreshold, QAThreshold *int
	// Expires is the new expiry; it must be set.
	Expires time.Time
	// Undelegate names delegations to remove; each must exist.
	Undelegate []string
	// Delegate adds a delegation NAME of threshold 1, or replaces the
	// patterns of an existing one: NAME=PATTERN[,PATTERN].
	Delegate []string
	// DelegateKeys replace the keys of delegation NAME: NAME=FILE, once
	// for each key.
	DelegateKeys []string
	// DelegateThresholds set the threshold of delegation NAME: NAME=N.
	DelegateThresholds []string
}

// RootEditError reports an edit that is malformed or names a delegation
// that does not exist; its message says what is expected. Input names the
// RootEdit field ("delegate", "delegate-key", "delegate-threshold") and
// the message starts with it, so a command can name its flag instead;
// Missing is the delegation the edit names and the root lacks, if any.
type RootEditError struct {
	Input, Missing string
	msg            string
}

func (e *RootEditError) Error() string { return e.msg }

// InputName returns Input.
func (e *RootEditError) InputName() string { return e.Input }

func editErrorf(input, missing, format string, args ...any) error {
	return &RootEditError{Input: input, Missing: missing, msg: fmt.Sprintf(format, args...)}
}

// InputError is an error about one input of an edit that is not
// malformed (an Undelegate of a delegation the root lacks): Input names
// it and the message starts with it; a command says which flag gave it.
type InputError struct {
	Input string
	Err   error
}

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *InputError) Unwrap() error { return e.Err }

// InputName returns Input.
func (e *InputError) InputName() string { return e.Input }

// Apply changes c by e, in the order undelegate, delegate, delegate keys,
// delegate thresholds. With fresh (a new root), the root and index keys
// are replaced even when e names none. Key files that cannot be read
// are errors naming the file; malformed edits are *RootEditError.
func (e RootEdit) Apply(c *RootConfig, fresh bool) error {
	var err error
	if len(e.RootKeys) > 0 || fresh {
		if c.RootKeys, err = LoadPublicKeys(e.RootKeys, true); err != nil {
			return err
		}
	}
	if e.RootThreshold != nil {
		c.RootThreshold = *e.RootThreshold
	}
	if len(e.IndexKeys) > 0 || fresh {
		if c.IndexKeys, err = LoadPublicKeys(e.IndexKeys, true); err != nil {
			return err
		}
	}
	if e.IndexThreshold != nil {
		c.IndexThreshold = *e.IndexThreshold
	}
	if len(e.QAKeys) > 0 {
		if c.QAKeys, err = LoadPublicKeys(e.QAKeys, true); err != nil {
			return err
		}
		if c.QAThreshold == 0 {
			c.QAThreshold = 1
		}
	}
	if e.QAThreshold != nil {
		c.QAThreshold = *e.QAThreshold
	}
	if e.Expires.IsZero() {
		return editErrorf("", "", "a root must expire: set its expiry")
	}
	c.Expires = e.Expires
	return e.applyDelegations(c)
}

// Delegation returns the delegation name of c, or nil.
func (c *RootConfig) Delegation(name string) *DelegationConfig {
	for i := range c.Delegations {
		if c.Delegations[i].Name == name {
			return &c.Delegations[i]
		}
	}
	return nil
}

func (e RootEdit) applyDelegations(c *RootConfig) error {
	for _, name := range e.Undelegate {
		if c.Delegation(name) == nil {
			return &InputError{Input: "undelegate", Err: fmt.Errorf("undelegate %s: the root has no such delegation", name)}
		}
		c.Delegations = slices.DeleteFunc(c.Delegations, func(d DelegationConfig) bool { return d.Name == name })
	}
	for _, v := range e.Delegate {
		name, patterns, ok := strings.Cut(v, "=")
		if !ok || name == "" || patterns == "" {
			return editErrorf("delegate", "", "delegate %q: want NAME=PATTERN[,PATTERN]", v)
		}
		d := c.Delegation(name)
		if d == nil {
			c.Delegations = append(c.Delegations, DelegationConfig{Name: name, Threshold: 1})
			d = &c.Delegations[len(c.Delegations)-1]
		}
		d.Packages = strings.Split(patterns, ",")
	}
	newKeys := map[string][]*PublicKey{}
	var names []string
	for _, v := range e.DelegateKeys {
		name, file, ok := strings.Cut(v, "=")
		if !ok || name == "" || file == "" {
			return editErrorf("delegate-key", "", "delegate-key %q: want NAME=FILE", v)
		}
		k, err := LoadPublicKey(file, true)
		if err != nil {
			return err
		}
		if newKeys[name] == nil {
			names = append(names, name)
		}
		newKeys[name] = append(newKeys[name], k)
	}
	for _, name := range names {
		d := c.Delegation(name)
		if d == nil {
			return editErrorf("delegate-key", name, "delegate-key %s=…: no delegation %s", name, name)
		}
		d.Keys = newKeys[name]
	}
	for _, v := range e.DelegateThresholds {
		name, n, ok := strings.Cut(v, "=")
		t, err := strconv.Atoi(n)
		if !ok || err != nil {
			return editErrorf("delegate-threshold", "", "delegate-threshold %q: want NAME=N", v)
		}
		d := c.Delegation(name)
		if d == nil {
			return editErrorf("delegate-threshold", name, "delegate-threshold %s=%d: no delegation %s", name, t, name)
		}
		d.Threshold = t
	}
	return nil
}

// WriteText writes what the root holds for a person, after "wrote
// WHERE: ": its version, the root and index keys and thresholds, the
// delegations and expiry, and the qa role when it has one.
func (r *Root) WriteText(w io.Writer, where string) error {
	s := r.Signed
	fmt.Fprintf(w, "wrote %s: version %d, %d root keys (threshold %d), %d index keys (threshold %d), %d delegations, expires %s\n",
		where, s.Version, len(s.Roles[RoleRoot].KeyIDs), s.Roles[RoleRoot].Threshold, len(s.Roles[RoleIndex].KeyIDs), s.Roles[RoleIndex].Threshold,
		len(s.Delegations), s.Expires.Format(time.RFC3339))
	if qa, ok := s.Roles[RoleQA]; ok {
		fmt.Fprintf(w, "qa role: %d keys (threshold %d) sign test evidence\n", len(qa.KeyIDs), qa.Threshold)
	}
	return nil
}
