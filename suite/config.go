// Package suite reads a repository's suites (suites.yaml), decides by
// policy whether verified test evidence lets a version or release set into
// a suite, and promotes it: the entry is copied, byte-identical and
// without rebuilding, from the previous suite's signed index into the
// next suite's, which is re-signed. Each suite is a complete signed
// kubepkg index under the repository's one root of trust, at
// <site>/<suite>/index.yaml; publish puts new builds into the first.
package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// File is the suites file at the root of a recipes repository. A
// repository without it has no suites and publishes one index, as before.
const File = "suites.yaml"

// MaxFileSize caps suites.yaml.
const MaxFileSize = 1 << 20

// APIVersion and Kind identify suites.yaml.
const (
	APIVersion = "kbuild.dev/v1"
	Kind       = "Suites"
)

// Config is suites.yaml: the suites in the order versions move through
// them.
type Config struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	// RootSuite, when set, names the suite also served at the site root
	// (<site>/index.yaml, its signatures, root chain and keys, byte for
	// byte): subscribers of the repository's index from before it had
	// suites keep reading it. Only the first suite may be served there, so
	// only publish and withdraw, which write it, copy it.
	RootSuite string  `yaml:"rootSuite,omitempty"`
	Suites    []Suite `yaml:"suites"`
}

// Suite is one suite. The first has no policy: publish puts new builds
// there. Every later one has a policy, and takes versions only from the
// suite before it.
type Suite struct {
	Name   string  `yaml:"name"`
	Policy *Policy `yaml:"policy,omitempty"`
}

// Policy is what a promotion into a suite needs: passing evidence on at
// least KubernetesMinors distinct Kubernetes minor versions, on each of
// Architectures, in environments matching Environment, signed by a
// threshold of the root's Role (qa), and no failing evidence. With Tests,
// a pass counts only when it lists each of them among its passed tests
// (e.g. install, upgrade, rollback).
type Policy struct {
	KubernetesMinors int               `yaml:"kubernetesMinors"`
	Architectures    []string          `yaml:"architectures"`
	Environment      map[string]string `yaml:"environment,omitempty"`
	Tests            []string          `yaml:"tests,omitempty"`
	Role             string            `yaml:"role"`
}

// reserved are names of site files and directories that a suite may not
// take.
var reserved = []string{sitelayout.EvidenceDir, sitelayout.RootDir, sitelayout.KeysDir, sitelayout.ByHashRoot, sitelayout.SBOMDir, sitelayout.ProvenanceDir, sitelayout.BuildDir, "packages", MatrixDir}

// suiteName is a DNS-1123 label, as suite names are.
var suiteName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Load reads and checks the suites file at path; found is false, with no
// error, when there is none.
func Load(path string) (c *Config, found bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, true, fmt.Errorf("%s: more than %d bytes", path, MaxFileSize)
	}
	c, err = Parse(data)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", path, err)
	}
	return c, true, nil
}

// Parse parses and checks suites.yaml.
func Parse(data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	c := &Config{}
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("not a suites file: %w", err)
	}
	return c, c.check()
}

func (c *Config) check() error {
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return fmt.Errorf("apiVersion %q, kind %q: want %s and %s", c.APIVersion, c.Kind, APIVersion, Kind)
	}
	if len(c.Suites) == 0 {
		return errors.New("suites: none listed; list at least the suite publish puts new builds into (e.g. unstable)")
	}
	seen := map[string]bool{}
	for i, s := range c.Suites {
		at := fmt.Sprintf("suites[%d] (%s)", i, s.Name)
		if len(s.Name) > 63 || !suiteName.MatchString(s.Name) {
			name := s.Name
			if len(name) > 100 {
				name = name[:100] + "…"
			}
			return fmt.Errorf("suites[%d]: name: suite name %q is not a DNS-1123 label (lowercase letters, digits and '-', at most 63): it names a directory of the site and a path in URLs", i, name)
		}
		if slices.Contains(reserved, s.Name) {
			return fmt.Errorf("%s: the name is a directory of the site (%s); choose another", at, strings.Join(reserved, ", "))
		}
		if seen[s.Name] {
			return fmt.Errorf("%s: listed twice", at)
		}
		seen[s.Name] = true
		switch {
		case i == 0 && s.Policy != nil:
			return fmt.Errorf("%s: the first suite takes new builds from publish and has no policy; put the policy on the suite after it", at)
		case i > 0 && s.Policy == nil:
			return fmt.Errorf("%s: policy missing; every suite after the first says what promotion into it needs", at)
		case i > 0:
			if err := s.Policy.check(); err != nil {
				return fmt.Errorf("%s: policy: %w", at, err)
			}
		}
	}
	if c.RootSuite != "" && c.RootSuite != c.Suites[0].Name {
		return fmt.Errorf("rootSuite %s: only the first suite (%s) can be served at the site root — it is what the site root served before suites, and only publish and withdraw write it", c.RootSuite, c.Suites[0].Name)
	}
	return nil
}

func (p *Policy) check() error {
	if p.Role != trust.RoleQA {
		return fmt.Errorf("role %q: evidence is signed by the root's %q role", p.Role, trust.RoleQA)
	}
	if p.KubernetesMinors < 1 {
		return fmt.Errorf("kubernetesMinors is %d; want 1 or more", p.KubernetesMinors)
	}
	if len(p.Architectures) == 0 {
		return errors.New("architectures: none listed; list those the evidence must cover (e.g. [amd64, arm64])")
	}
	env := map[string]string{"kubernetes": "1.0"}
	for _, a := range p.Architectures {
		env["arch"] = a
		if err := evidence.CheckEnv(env); err != nil {
			return fmt.Errorf("architectures: %w", err)
		}
	}
	for _, t := range p.Tests {
		if strings.TrimSpace(t) == "" || len(t) > 128 {
			return fmt.Errorf("tests: %q is not a test name", t)
		}
	}
	for k, v := range p.Environment {
		if k == "kubernetes" || k == "arch" {
			return fmt.Errorf("environment: %s is set by kubernetesMinors and architectures", k)
		}
		env := map[string]string{"kubernetes": "1.0", "arch": p.Architectures[0], k: v}
		if err := evidence.CheckEnv(env); err != nil {
			return fmt.Errorf("environment: %w", err)
		}
	}
	return nil
}

// Index returns the position of suite name, or -1.
func (c *Config) Index(name string) int {
	return slices.IndexFunc(c.Suites, func(s Suite) bool { return s.Name == name })
}

// Names returns the suite names in order.
func (c *Config) Names() []string {
	var out []string
	for _, s := range c.Suites {
		out = append(out, s.Name)
	}
	return out
}

// First is the suite publish puts new builds into.
func (c *Config) First() string { return c.Suites[0].Name }

// String describes p in words, as errors and the site show it.
func (p *Policy) String() string {
	s := fmt.Sprintf("pass on >= %d Kubernetes minor versions and on %s", p.KubernetesMinors, strings.Join(p.Architectures, " and "))
	if len(p.Environment) > 0 {
		s += " with " + evidence.EnvString(p.Environment)
	}
	if len(p.Tests) > 0 {
		s += ", passing " + strings.Join(p.Tests, ", ")
	}
	return s + ", signed by " + p.Role
}

// MirrorRoot copies the first suite's signed index to the site root when
// the suites file says to (RootSuite; publish.MirrorIndex), and writes the
// site root's index.html: the suites, each linking its catalog and
// index, with what enters it (site.WriteSuites; title is the catalogs'
// title, "" for the default). It returns what it copied, or nil when the
// suites file does not say to.
func (c *Config) MirrorRoot(dir, title string) (*publish.MirrorResult, error) {
	if c.RootSuite == "" {
		return nil, nil
	}
	res, err := publish.MirrorIndex(filepath.Join(dir, c.RootSuite), dir)
	if err != nil {
		return nil, fmt.Errorf("serving suite %s at the site root (rootSuite in %s): %w", c.RootSuite, File, err)
	}
	rows := make([]site.SuiteRow, len(c.Suites))
	for i, s := range c.Suites {
		rows[i] = site.SuiteRow{Name: s.Name, Policy: "new builds, from publish", AtRoot: s.Name == c.RootSuite,
			NoIndex: !exists(filepath.Join(dir, s.Name, sitelayout.IndexFile))}
		if s.Policy != nil {
			rows[i].Policy = "from " + c.Suites[i-1].Name + ", when the evidence shows a " + s.Policy.String()
		}
	}
	compat, err := site.ListMatrices(dir)
	if err != nil {
		return res, err
	}
	opts := []site.Option{site.WithPublished(sitelayout.SignatureFile), site.WithCompat(compat...)}
	if exists(filepath.Join(dir, sitelayout.RootFile)) {
		opts = append(opts, site.WithPublished(sitelayout.RootFile))
	}
	if title != "" {
		opts = append(opts, site.WithTitle(title))
	}
	head := &index.RepositoryIndex{Generated: res.Generated, Expires: res.Expires}
	if err := site.WriteSuites(dir, head, rows, opts...); err != nil {
		return res, err
	}
	return res, nil
}

// SiteDir returns the directory of the index of suite name (the first of
// the suites file when name is empty) under site (a directory or an
// http(s) URL of a published site), or site itself when
// there is no suites file. A name the suites file does not list, or a
// name without a suites file, is an error naming the suites.
func SiteDir(site, name, suitesFile string) (string, error) {
	c, found, err := Load(suitesFile)
	if err != nil {
		return "", err
	}
	if !found {
		if name != "" {
			return "", &publish.InputError{Input: "suite", Err: fmt.Errorf("suite %s: there is no %s, so the site has no suites", name, suitesFile)}
		}
		return site, nil
	}
	if name == "" {
		name = c.First()
	}
	if c.Index(name) < 0 {
		return "", &publish.InputError{Input: "suite", Err: fmt.Errorf("suite %s is not in %s (suites: %v)", name, suitesFile, c.Names())}
	}
	if strings.HasPrefix(site, "https://") || strings.HasPrefix(site, "http://") {
		return strings.TrimSuffix(site, "/") + "/" + name, nil
	}
	return filepath.Join(site, name), nil
}
