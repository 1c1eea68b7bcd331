// Package evidence makes and verifies compatibility evidence: an in-toto
// Statement (v1) with a test-result predicate, in a DSSE envelope signed
// by keys of the root's qa role, saying that the exact chart and image
// digests of one version (or of every member of a release set) passed or
// failed tests in one environment (Kubernetes minor, architecture,
// runtime, …). Its subjects are taken from the signed index, so evidence
// is about what the index pins and nothing else.
package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// Types of the statement.
const (
	PayloadType   = "application/vnd.in-toto+json"
	StatementType = "https://in-toto.io/Statement/v1"
	PredicateType = "https://in-toto.io/attestation/test-result/v0.1"
	// EnvelopeMediaType is the media type of a signed statement, for OCI
	// referrers.
	EnvelopeMediaType = "application/vnd.dsse.envelope.v1+json"
)

// Names of the configuration descriptors kbuild writes.
const (
	// EnvironmentConfig holds the environment as annotations.
	EnvironmentConfig = "environment"
	// TargetConfig names what was tested and until when the evidence holds.
	TargetConfig = "kbuild.dev/evidence"
	// LogConfig names the configuration entry holding the digest of the
	// run's log.
	LogConfig = "kbuild.dev/log"
	// RunConfig names the configuration entry saying how the tests ran.
	RunConfig = "kbuild.dev/run"
)

// Results of a test run.
const (
	Pass = "pass"
	Fail = "fail"
)

// Statement is an in-toto v1 Statement with a test-result predicate.
type Statement struct {
	Type          string     `json:"_type"`
	Subject       []Subject  `json:"subject"`
	PredicateType string     `json:"predicateType"`
	Predicate     TestResult `json:"predicate"`
}

// Subject is an artifact the statement is about.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// TestResult is the test-result predicate (v0.1).
type TestResult struct {
	Result        string               `json:"result"`
	Configuration []ResourceDescriptor `json:"configuration"`
	URL           string               `json:"url,omitempty"`
	PassedTests   []string             `json:"passedTests,omitempty"`
	WarnedTests   []string             `json:"warnedTests,omitempty"`
	FailedTests   []string             `json:"failedTests,omitempty"`
}

// ResourceDescriptor is an in-toto resource descriptor.
type ResourceDescriptor struct {
	Name        string            `json:"name"`
	URI         string            `json:"uri,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Digest, where the descriptor names content (the run's log), is
	// its digests by algorithm: {"sha256": "<hex>"}.
	Digest map[string]string `json:"digest,omitempty"`
}

// Target is the version (or release set) tested.
type Target struct {
	Package string
	Version string
	Build   int
}

// String is "name version build N".
func (t Target) String() string { return fmt.Sprintf("%s %s build %d", t.Package, t.Version, t.Build) }

// ParseTarget parses NAME@VERSION as given on a command line; the build
// comes separately. VERSION is kept in its published spelling
// (spec.CanonicalVersion): foreman@v3.15.0 is foreman 3.15.0.
func ParseTarget(s string, build int) (Target, error) {
	name, version, ok := strings.Cut(s, "@")
	if !ok || name == "" || version == "" {
		return Target{}, fmt.Errorf("%q: want NAME@VERSION, e.g. foreman@3.15.0", s)
	}
	if err := index.CheckPackageName(name); err != nil {
		return Target{}, err
	}
	if build < 1 {
		return Target{}, &InputError{Input: "build", Err: fmt.Errorf("build %d of %s: must be 1 or more", build, s)}
	}
	return Target{Package: name, Version: spec.CanonicalVersion(version), Build: build}, nil
}

// Attestation is what a test run says.
type Attestation struct {
	Target Target
	// Result is Pass or Fail.
	Result string
	// Env is the environment: kubernetes (MAJOR.MINOR) and arch are
	// required; runtime and others are free.
	Env map[string]string
	// Log is the URL of the test run, optional.
	Log string
	// Issued is when the run ended; Expires when the evidence stops
	// counting (after Issued).
	Issued, Expires time.Time
	Passed, Failed  []string
	// LogDigest, when set, is sha256:<hex> of the run's whole log
	// (kbuild test): written as the digest of a configuration entry
	// named LogConfig.
	LogDigest string
	// Run, when set, says how the tests ran (kbuild test: runner,
	// upgradeFrom, rollback): the annotations of a configuration entry
	// named RunConfig.
	Run map[string]string
}

var (
	envKey    = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	envValue  = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,64}$`)
	k8sMinor  = regexp.MustCompile(`^v?([1-9][0-9]?)\.(0|[1-9][0-9]{0,2})(\.[0-9]+)?$`)
	knownArch = []string{"amd64", "arm64", "ppc64le", "s390x", "riscv64"}
)

// InputError is an error about one input of an attestation: Input names
// it ("env", "result", "log", "build") and the message starts with it; a command
// says which flag gave it.
type InputError struct {
	Input string
	Err   error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// InputName returns Input.
func (e *InputError) InputName() string { return e.Input }

// ParseEnv parses "kubernetes=1.33,arch=amd64,runtime=containerd".
func ParseEnv(s string) (map[string]string, error) {
	env := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, &InputError{Input: "env", Err: fmt.Errorf("env %q: %q is not KEY=VALUE", s, kv)}
		}
		if _, dup := env[k]; dup {
			return nil, &InputError{Input: "env", Err: fmt.Errorf("env %q: %s given twice", s, k)}
		}
		env[k] = v
	}
	return env, CheckEnv(env)
}

// CheckEnv checks an environment: keys are lowercase words, values short
// plain tokens, kubernetes is a version whose minor is kept (1.33.2 is
// 1.33) and arch a Go architecture name.
func CheckEnv(env map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !envKey.MatchString(k) {
			return fmt.Errorf("environment key %q: use lowercase letters, digits and '-'", k)
		}
		if !envValue.MatchString(env[k]) {
			return fmt.Errorf("environment %s=%q: use letters, digits and . _ + - (at most 64)", k, env[k])
		}
	}
	k, ok := env["kubernetes"]
	if !ok {
		return errors.New("the environment needs kubernetes=MAJOR.MINOR (e.g. kubernetes=1.33)")
	}
	if !k8sMinor.MatchString(k) {
		return fmt.Errorf("environment kubernetes=%q: want MAJOR.MINOR, e.g. 1.33", k)
	}
	a, ok := env["arch"]
	if !ok {
		return errors.New("the environment needs arch (e.g. arch=amd64)")
	}
	if !slices.Contains(knownArch, a) {
		return fmt.Errorf("environment arch=%q: want one of %s", a, strings.Join(knownArch, ", "))
	}
	return nil
}

// KubernetesMinor returns the MAJOR.MINOR of a kubernetes environment value.
func KubernetesMinor(v string) string {
	m := k8sMinor.FindStringSubmatch(v)
	if m == nil {
		return v
	}
	return m[1] + "." + m[2]
}

// New returns the statement of a and its subjects (from Subjects).
func New(a Attestation, subjects []Subject) (*Statement, error) {
	if a.Result != Pass && a.Result != Fail {
		return nil, &InputError{Input: "result", Err: fmt.Errorf("result %q: want pass or fail", a.Result)}
	}
	if err := CheckEnv(a.Env); err != nil {
		return nil, err
	}
	if a.Issued.IsZero() || !a.Expires.After(a.Issued) {
		return nil, fmt.Errorf("evidence must expire after it is issued (issued %s, expires %s)", fmtTime(a.Issued), fmtTime(a.Expires))
	}
	if a.Log != "" && !strings.HasPrefix(a.Log, "https://") && !strings.HasPrefix(a.Log, "http://") {
		return nil, &InputError{Input: "log", Err: fmt.Errorf("log %q: want the http(s) URL of the test run", a.Log)}
	}
	if a.Result == Pass && len(a.Failed) > 0 {
		return nil, fmt.Errorf("a pass result lists %d failed tests; a pass means all tests passed", len(a.Failed))
	}
	if len(subjects) == 0 {
		return nil, errors.New("evidence needs subjects")
	}
	env := map[string]string{}
	for k, v := range a.Env {
		env[k] = v
	}
	env["kubernetes"] = KubernetesMinor(env["kubernetes"])
	s := &Statement{
		Type: StatementType, Subject: subjects, PredicateType: PredicateType,
		Predicate: TestResult{
			Result: a.Result, URL: a.Log, PassedTests: sorted(a.Passed), FailedTests: sorted(a.Failed),
			Configuration: []ResourceDescriptor{
				{Name: EnvironmentConfig, Annotations: env},
				{Name: TargetConfig, Annotations: map[string]string{
					"package": a.Target.Package, "version": a.Target.Version, "build": strconv.Itoa(a.Target.Build),
					"issued": fmtTime(a.Issued), "expires": fmtTime(a.Expires),
				}},
			},
		},
	}
	if a.LogDigest != "" {
		h, err := spec.ParseDigest(a.LogDigest)
		if err != nil {
			return nil, fmt.Errorf("log digest %q: %w", a.LogDigest, err)
		}
		s.Predicate.Configuration = append(s.Predicate.Configuration, ResourceDescriptor{Name: LogConfig, Digest: map[string]string{"sha256": h.Hex}})
	}
	if len(a.Run) > 0 {
		s.Predicate.Configuration = append(s.Predicate.Configuration, ResourceDescriptor{Name: RunConfig, Annotations: maps.Clone(a.Run)})
	}
	return s, nil
}

// Sign encodes s and signs it as a DSSE envelope (index.SignEnvelope).
func Sign(s *Statement, signers ...trust.Signer) ([]byte, error) {
	payload, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return trust.SignEnvelope(PayloadType, payload, signers...)
}

func fmtTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func sorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
