package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/suite"
	"kbuild.dev/kbuild/trust"
)

// printPublished prints what a publish wrote, signed, copied and attached.
func printPublished(env *Env, site string, res *suite.PublishResult, signers []trust.Signer) {
	if res.Published != nil {
		printSigned(env, res.Published, signers)
	}
	if res.Mirror != nil {
		fmt.Fprintf(env.Stdout, "wrote %s: suite %s, also served at the site root (rootSuite)\n", res.Mirror.Index, res.RootSuite)
	}
	for _, r := range res.Attached {
		fmt.Fprintf(env.Stdout, "attached evidence to %s\n", r)
	}
	for _, e := range res.Evidence {
		fmt.Fprintf(env.Stdout, "wrote %s: %s from %s (%s)\n", filepath.Join(site, filepath.FromSlash(e.Dest)), e.Verified.Target, e.Src, e.Digest)
	}
	for _, file := range res.Compat {
		fmt.Fprintf(env.Stdout, "wrote %s\n", file)
	}
}

// printSigned prints what a publish, index or withdraw wrote and signed.
func printSigned(env *Env, res *publish.Result, signers []trust.Signer) {
	fmt.Fprintf(env.Stdout, "wrote %s: %d packages, %d versions\n", res.Index, res.Packages, res.Versions)
	ids := make([]string, len(signers))
	for i, s := range signers {
		ids[i] = s.KeyID()
	}
	label := "keyid"
	if len(ids) > 1 {
		label = "keyids"
	}
	fmt.Fprintf(env.Stdout, "signed %s.sig (%s %s)\n", res.Index, label, strings.Join(ids, ", "))
}

// printWithdrawn prints what a withdrawal changed, suite by suite.
func printWithdrawn(env *Env, res *suite.WithdrawResult, pkg, ver string, build int, signers []trust.Signer) {
	for _, w := range res.Indexes {
		if w.Withdrawal == nil {
			fmt.Fprintf(env.Stdout, "suite %s does not hold %s@%s build %d\n", w.Suite, pkg, ver, build)
			continue
		}
		fmt.Fprintf(env.Stdout, "withdrew %s (digest %s): %s\n", w.Withdrawal, w.Withdrawal.Digest, w.Withdrawal.Reason)
		for _, fl := range w.Followers {
			if fl.To == nil {
				fmt.Fprintf(env.Stdout, "kubepkg clusters running it with spec.version %q keep running it: no build left meets %s, and fresh installs of %s find none\n", fl.Constraint, fl.Constraint, fl.Constraint)
				continue
			}
			fmt.Fprintf(env.Stdout, "kubepkg clusters running it with spec.version %q move to %s %s build %d\n", fl.Constraint, pkg, fl.To.Version, fl.To.Build)
		}
		printSigned(env, w.Index, signers)
	}
	if res.Mirror != nil {
		fmt.Fprintf(env.Stdout, "wrote %s: suite %s, also served at the site root (rootSuite)\n", res.Mirror.Index, res.RootSuite)
	}
}
