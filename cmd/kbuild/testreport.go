package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/qualify"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

var fromBuild = regexp.MustCompile(`^([0-9A-Za-z.-]+)\+build\.([1-9][0-9]{0,8})$`)

// parseFrom reads --from VERSION+build.M.
func parseFrom(pkg, s string) (evidence.Target, error) {
	m := fromBuild.FindStringSubmatch(s)
	if m == nil {
		return evidence.Target{}, fmt.Errorf("--from %q: want VERSION+build.M, e.g. 3.14.0+build.2", s)
	}
	build, _ := strconv.Atoi(m[2])
	return evidence.Target{Package: pkg, Version: spec.CanonicalVersion(m[1]), Build: build}, nil
}

// report prints one line per phase, writes the JUnit file, the step
// summary and, with --attest, the signed evidence; a failed test exits 1.
func (f *testFlags) report(env *Env, res *qualify.Result, target evidence.Target, x *index.RepositoryIndex, signers []trust.Signer) error {
	for _, p := range res.Phases {
		state := "ok  "
		switch {
		case p.Err != nil:
			state = "FAIL"
		case p.Skipped != "":
			state = "skip"
		}
		fmt.Fprintf(env.Stdout, "%s %s %s (%s)\n", state, p.Name, p.Detail, p.Took.Round(time.Millisecond))
		if p.Err != nil {
			fmt.Fprintf(env.Stderr, "%s %s: %v\n", p.Name, p.Detail, p.Err)
		}
		if p.Err != nil && env.Getenv("GITHUB_ACTIONS") == "true" {
			fmt.Fprintf(env.Stderr, "::error title=kbuild test %s::%s %s: %s\n", target, p.Name, p.Detail, strings.ReplaceAll(p.Err.Error(), "\n", "%0A"))
		}
	}
	if f.junit != "" {
		var b strings.Builder
		if err := res.WriteJUnit(&b, target); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(f.junit, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	summary := f.summary
	if summary == "" {
		summary = env.Getenv("GITHUB_STEP_SUMMARY")
	}
	if summary != "" {
		sf, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		err = res.WriteMarkdown(sf, target)
		if cerr := sf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if f.attest {
		issued, err := epochOrNow(env)
		if err != nil {
			return err
		}
		envelope, err := res.Sign(x, target, issued, issued.Add(f.expires), f.logURL, signers...)
		if err != nil {
			return fmt.Errorf("signing the evidence: %w", err)
		}
		if err := atomicfile.WriteFile(f.out, envelope, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s: %s %s on %s\n", f.out, target, res.Verdict(), evidence.EnvString(res.Env))
	}
	fmt.Fprintf(env.Stdout, "%s: %s (log %s)\n", target, res.Verdict(), res.LogDigest)
	if !res.Pass() {
		return &exitError{code: exitFailed}
	}
	return nil
}

// listUntested prints the builds of the index with no evidence in
// --untested DIR: what the qualify workflow tests.
func (f *testFlags) listUntested(ctx context.Context, env *Env, args []string) error {
	if len(args) != 0 || f.ref == "" {
		return usagef("--untested DIR takes no NAME@VERSION and needs --index REF")
	}
	tr, err := f.require("test")
	if err != nil {
		return err
	}
	pub, err := siteread.ReadIndex(ctx, f.ref, tr, siteread.WithTimeout(f.timeout))
	if err != nil {
		return err
	}
	ts, err := qualify.Untested(pub.Verified.Index, f.untested)
	if err != nil {
		return err
	}
	for _, t := range ts {
		fmt.Fprintf(env.Stdout, "%s@%s %d\n", t.Package, t.Version, t.Build)
	}
	return nil
}
