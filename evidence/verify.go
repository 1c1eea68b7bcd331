package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/fault"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// ErrRefused is wrapped by every refusal of Verify.
var ErrRefused = fault.New(fault.Refused, "evidence refused")

// ErrNoRoot is wrapped by Verify's error when no root of trust is given:
// evidence counts only under a root with a qa role.
var ErrNoRoot = errors.New("no root of trust given")

// ErrNoQARole is wrapped by the errors of Verify and CheckQASigners (and
// suite.Promote) about a root without a qa role: no evidence can count
// until the root's next version adds one.
var ErrNoQARole = errors.New("has no qa role")

// Verified is evidence that Verify accepted.
type Verified struct {
	Statement *Statement
	Target    Target
	// Result is Pass or Fail: a verified fail is evidence too.
	Result string
	// Env is the environment tested, kubernetes as MAJOR.MINOR.
	Env             map[string]string
	Issued, Expires time.Time
	// SignedBy are the qa keys whose signature is valid.
	SignedBy []string
}

// Verify checks signed evidence as promote and repo verify do: signed by
// a threshold of root's qa role (so the index key alone cannot vouch for
// tests, and evidence of a key the root no longer lists is revoked), a
// test-result statement, not expired at now, and its subjects exactly the
// digests x pins for its target (Subjects). A refusal wraps ErrRefused and
// says what to do.
func Verify(envelope []byte, root *trust.Root, x *index.RepositoryIndex, now time.Time) (*Verified, error) {
	if root == nil {
		return nil, fmt.Errorf("%w: evidence is verified against a root of trust with a qa role: %w", ErrRefused, ErrNoRoot)
	}
	keys, threshold, ok := root.RoleKeys(trust.RoleQA)
	if !ok {
		return nil, fmt.Errorf("%w: root version %d %w, so no key may sign test evidence", ErrRefused, root.Signed.Version, ErrNoQARole)
	}
	payload, signedBy, err := trust.OpenEnvelope(envelope, PayloadType, keys)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if len(signedBy) < threshold {
		var env trust.Envelope
		_ = json.Unmarshal(envelope, &env) // decoded by OpenEnvelope already
		var outside []string
		for _, s := range env.Signatures {
			if !slices.Contains(signedBy, s.KeyID) {
				outside = append(outside, short(s.KeyID))
			}
		}
		return nil, fmt.Errorf("%w: signed by %d of the qa role's keys in root version %d, which needs %d; signatures by keys outside the role (or invalid): %s. Sign with a qa key the root lists",
			ErrRefused, len(signedBy), root.Signed.Version, threshold, orNone(outside))
	}
	var s Statement
	if err := json.Unmarshal(payload, &s); err != nil {
		return nil, fmt.Errorf("%w: the payload is not an in-toto statement: %v", ErrRefused, err)
	}
	if s.Type != StatementType || s.PredicateType != PredicateType {
		return nil, fmt.Errorf("%w: statement type %q with predicate %q, want %q and %q", ErrRefused, s.Type, s.PredicateType, StatementType, PredicateType)
	}
	v := &Verified{Statement: &s, Result: s.Predicate.Result, SignedBy: signedBy}
	if v.Result != Pass && v.Result != Fail {
		return nil, fmt.Errorf("%w: result %q, want pass or fail", ErrRefused, v.Result)
	}
	for _, c := range s.Predicate.Configuration {
		switch c.Name {
		case EnvironmentConfig:
			v.Env = c.Annotations
		case TargetConfig:
			a := c.Annotations
			build, err := strconv.Atoi(a["build"])
			if err != nil {
				return nil, fmt.Errorf("%w: configuration %s: build %q is not a number", ErrRefused, TargetConfig, a["build"])
			}
			v.Target = Target{Package: a["package"], Version: spec.CanonicalVersion(a["version"]), Build: build}
			if v.Issued, err = time.Parse(time.RFC3339, a["issued"]); err != nil {
				return nil, fmt.Errorf("%w: configuration %s: issued: %v", ErrRefused, TargetConfig, err)
			}
			if v.Expires, err = time.Parse(time.RFC3339, a["expires"]); err != nil {
				return nil, fmt.Errorf("%w: configuration %s: expires: %v", ErrRefused, TargetConfig, err)
			}
		}
	}
	if v.Target.Package == "" {
		return nil, fmt.Errorf("%w: the statement has no %s configuration naming what was tested", ErrRefused, TargetConfig)
	}
	if err := CheckEnv(v.Env); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRefused, v.Target, err)
	}
	if v.Result == Pass && len(s.Predicate.FailedTests) > 0 {
		return nil, fmt.Errorf("%w: the evidence for %s says result pass but lists failedTests %s; a pass cannot list failures: attest again with the result fail, or without the failed tests if they were not run", ErrRefused, v.Target, quoteCut(s.Predicate.FailedTests))
	}
	if v.Issued.After(now.Add(trust.MaxClockSkew)) {
		return nil, fmt.Errorf("%w: the evidence for %s was issued on %s, in the future (now %s; clocks may differ by %s); check the clock of the machine that attested and attest again", ErrRefused, v.Target, fmtTime(v.Issued), fmtTime(now), trust.MaxClockSkew)
	}
	if now.After(v.Expires) {
		return nil, fmt.Errorf("%w: the evidence for %s on %s expired on %s; run the tests again and attest", ErrRefused, v.Target, EnvString(v.Env), fmtTime(v.Expires))
	}
	want, err := Subjects(x, v.Target)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err := sameSubjects(s.Subject, want); err != nil {
		return nil, fmt.Errorf("%w: the evidence for %s is not about what the index pins: %w; attest the build the index publishes", ErrRefused, v.Target, err)
	}
	return v, nil
}

// quoteCut lists names quoted, at most five and each cut to 100 bytes.
func quoteCut(names []string) string {
	var q []string
	for i, n := range names {
		if i == 5 {
			q = append(q, fmt.Sprintf("and %d more", len(names)-5))
			break
		}
		if len(n) > 100 {
			n = n[:100] + "…"
		}
		q = append(q, strconv.Quote(n))
	}
	return strings.Join(q, ", ")
}

// sameSubjects checks that have holds exactly the subjects of want.
func sameSubjects(have, want []Subject) error {
	pins := map[string]string{}
	for _, s := range want {
		pins[s.Name] = s.Digest["sha256"]
	}
	got := map[string]bool{}
	for _, s := range have {
		pin, ok := pins[s.Name]
		if !ok {
			return fmt.Errorf("subject %s (sha256:%s) is not pinned by the index", s.Name, s.Digest["sha256"])
		}
		if s.Digest["sha256"] != pin {
			return fmt.Errorf("subject %s: the evidence has sha256:%s, the index pins sha256:%s", s.Name, s.Digest["sha256"], pin)
		}
		got[s.Name] = true
	}
	for _, s := range want {
		if !got[s.Name] {
			return fmt.Errorf("the evidence lacks subject %s (sha256:%s)", s.Name, s.Digest["sha256"])
		}
	}
	return nil
}

// EnvString is the environment as "arch=amd64,kubernetes=1.33,…", keys
// sorted.
func EnvString(env map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		parts = append(parts, k+"="+env[k])
	}
	return strings.Join(parts, ",")
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	if id == "" {
		return "(no keyid)"
	}
	return id
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
