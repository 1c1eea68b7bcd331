package qualify

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/trust"
)

// Verdict is "pass" or "fail".
func (r *Result) Verdict() string {
	if r.Pass() {
		return evidence.Pass
	}
	return evidence.Fail
}

// Attestation returns the evidence of the result for target, to sign
// with evidence.New and evidence.Sign: the phases passed and failed, the
// environment read from the cluster, the log's digest, and how it ran.
func (r *Result) Attestation(target evidence.Target, issued, expires time.Time, logURL string) evidence.Attestation {
	run := map[string]string{"runner": "kbuild test"}
	if r.From != nil {
		run["upgradeFrom"] = index.ExactBuild(r.From.Target.Version, r.From.Target.Build)[1:]
	}
	for _, p := range r.Phases {
		if p.Skipped != "" {
			run["skipped-"+p.Name] = envValue(p.Skipped)
		}
	}
	return evidence.Attestation{
		Target: target, Result: r.Verdict(), Env: maps.Clone(r.Env), Log: logURL,
		Issued: issued, Expires: expires, Passed: r.Passed(), Failed: r.Failed(),
		LogDigest: r.LogDigest, Run: run,
	}
}

// Sign returns the signed evidence (a DSSE envelope of an in-toto
// statement) of the result, whose subjects are the exact spec, chart and
// image digests x pins for target — the ones the run installed and
// checked every pod against.
func (r *Result) Sign(x *index.RepositoryIndex, target evidence.Target, issued, expires time.Time, logURL string, signers ...trust.Signer) ([]byte, error) {
	subjects, err := evidence.Subjects(x, target)
	if err != nil {
		return nil, err
	}
	st, err := evidence.New(r.Attestation(target, issued, expires, logURL), subjects)
	if err != nil {
		return nil, err
	}
	return evidence.Sign(st, signers...)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the result as JUnit XML (what GitHub's test reporting
// actions read): one test case per phase.
func (r *Result) WriteJUnit(w io.Writer, target evidence.Target) error {
	s := junitSuite{Name: "kbuild test " + target.String()}
	var total time.Duration
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		s.Properties = append(s.Properties, junitProperty{Name: k, Value: r.Env[k]})
	}
	for _, p := range r.Phases {
		c := junitCase{Name: strings.TrimSpace(p.Name + " " + p.Detail), Classname: target.Package, Time: seconds(p.Took)}
		switch {
		case p.Err != nil:
			msg := p.Err.Error()
			first, _, _ := strings.Cut(msg, "\n")
			c.Failure = &junitMessage{Message: first, Text: msg}
			s.Failures++
		case p.Skipped != "":
			c.Skipped = &junitMessage{Message: p.Skipped}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
		total += p.Took
	}
	s.Tests, s.Time = len(s.Cases), seconds(total)
	out := junitSuites{Name: "kbuild test", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteMarkdown writes the result for a GitHub step summary: the verdict,
// the environment, each phase, the plan and what ran where.
func (r *Result) WriteMarkdown(w io.Writer, target evidence.Target) error {
	var b strings.Builder
	icon := "✅"
	if !r.Pass() {
		icon = "❌"
	}
	fmt.Fprintf(&b, "### %s kbuild test %s: %s\n\n", icon, md(target.String()), r.Verdict())
	if len(r.Env) > 0 {
		var env []string
		for _, k := range slices.Sorted(maps.Keys(r.Env)) {
			env = append(env, fmt.Sprintf("%s=%s", k, r.Env[k]))
		}
		fmt.Fprintf(&b, "Environment (read from the cluster): `%s`\n\n", strings.Join(env, "`, `"))
	}
	b.WriteString("| phase | | result | time | kbuild CPU |\n|---|---|---|---|---|\n")
	for _, p := range r.Phases {
		res := "passed"
		switch {
		case p.Err != nil:
			res = "**failed**"
		case p.Skipped != "":
			res = "skipped: " + md(p.Skipped)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", p.Name, md(p.Detail), res, p.Took.Round(time.Millisecond), p.CPU.Round(time.Millisecond))
	}
	for _, p := range r.Phases {
		if p.Err != nil {
			fmt.Fprintf(&b, "\n**%s %s**:\n```\n%s\n```\n", p.Name, md(p.Detail), strings.ReplaceAll(p.Err.Error(), "```", "'''"))
		}
	}
	if r.Plan != nil {
		b.WriteString("\n| package | version | build | variant | why |\n|---|---|---|---|---|\n")
		for _, p := range r.Plan.Packages {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", md(p.Name), md(p.Version), p.Build, md(p.Variant), md(p.Why))
		}
		b.WriteString("\n| release | namespace | chart | digest |\n|---|---|---|---|\n")
		for _, rel := range r.Plan.Releases {
			fmt.Fprintf(&b, "| %s | %s | %s %s | `%s` |\n", md(rel.Name), md(rel.Namespace), md(rel.Chart.Name), md(rel.Chart.Version), rel.Chart.Digest)
		}
	}
	if len(r.Pods) > 0 {
		b.WriteString("\n| pod | node | arch | runtime | images |\n|---|---|---|---|---|\n")
		for _, p := range r.Pods {
			fmt.Fprintf(&b, "| %s/%s | %s | %s | %s | %s |\n", md(p.Namespace), md(p.Name), md(p.Node), md(p.Arch), md(p.Runtime), md(strings.Join(p.Images, " ")))
		}
	}
	fmt.Fprintf(&b, "\nLog: `%s`\n", r.LogDigest)
	_, err := io.WriteString(w, b.String())
	return err
}

// md keeps a cell one cell: pipes and line breaks escaped.
func md(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}
