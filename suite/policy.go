package suite

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"kbuild.dev/kbuild/evidence"
)

// Evaluate decides whether the verified evidence of one target meets p:
// no failing evidence in an environment the policy covers, and passing
// evidence on enough Kubernetes minors and on every architecture. The
// error says what is missing.
func (p *Policy) Evaluate(target evidence.Target, ev []*evidence.Verified) error {
	minors := map[string]bool{}
	arches := map[string]bool{}
	var fails, partial []string
	for _, v := range ev {
		if v.Target != target {
			return fmt.Errorf("evidence for %s given for %s", v.Target, target)
		}
		if !p.covers(v.Env) {
			continue
		}
		if v.Result == evidence.Fail {
			fails = append(fails, evidence.EnvString(v.Env))
			continue
		}
		if lacks := p.lacks(v.Statement.Predicate.PassedTests); len(lacks) > 0 {
			partial = append(partial, fmt.Sprintf("the pass on %s lists no %s test", evidence.EnvString(v.Env), strings.Join(lacks, ", ")))
			continue
		}
		minors[v.Env["kubernetes"]] = true
		arches[v.Env["arch"]] = true
	}
	if len(fails) > 0 {
		sort.Strings(fails)
		return fmt.Errorf("%s failed its tests on %s; a failure blocks promotion until the tests pass there (attest a pass) or a new build is made", target, strings.Join(fails, "; "))
	}
	var missing []string
	if len(minors) < p.KubernetesMinors {
		missing = append(missing, fmt.Sprintf("passes on %d Kubernetes minor version(s) (%s), needs %d", len(minors), orNone(slices.Sorted(maps.Keys(minors))), p.KubernetesMinors))
	}
	for _, a := range p.Architectures {
		if !arches[a] {
			missing = append(missing, "no pass on "+a)
		}
	}
	if len(missing) > 0 {
		sort.Strings(partial)
		return fmt.Errorf("%s does not meet the policy (%s): %s", target, p, strings.Join(append(missing, partial...), "; "))
	}
	return nil
}

// lacks returns the tests of p that passed does not list.
func (p *Policy) lacks(passed []string) []string {
	var out []string
	for _, t := range p.Tests {
		if !slices.Contains(passed, t) {
			out = append(out, t)
		}
	}
	return out
}

// covers reports whether evidence from env counts for p: its architecture
// is one p names and it matches p's environment.
func (p *Policy) covers(env map[string]string) bool {
	found := false
	for _, a := range p.Architectures {
		found = found || env["arch"] == a
	}
	for k, v := range p.Environment {
		if env[k] != v {
			return false
		}
	}
	return found
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
