package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"runtime/debug"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/trust"
)

func newRepoCmd() *Command {
	return &Command{
		Use:     "repo COMMAND",
		Summary: "Make signing keys, publish a signed index.yaml, verify a published one.",
		Help: `A repository is a static site: index.yaml (every published version of every
package, with its spec digest), index.yaml.sig (ed25519 signatures of its
exact bytes) and, with a root of trust, root.yaml and root/<N>.yaml (see
'kbuild trust'). kubepkg clusters subscribe to the URL of index.yaml.`,
		Subcommands: []*Command{newRepoKeygenCmd(), newRepoIndexCmd(), newRepoVerifyCmd(), newRepoWithdrawCmd(), newRepoFollowCmd()},
	}
}

func newRepoKeygenCmd() *Command {
	return &Command{
		Use:     "keygen PREFIX",
		Summary: "Create an ed25519 signing key: PREFIX.key (private, mode 0600) and PREFIX.pub.",
		Help: `Writes PREFIX.key (PEM "PRIVATE KEY", PKCS #8, mode 0600) and PREFIX.pub
(PEM "PUBLIC KEY", PKIX) and prints the keyid: the hex sha256 of the public
key. An existing file is never overwritten. Keep PREFIX.key out of the
repository: in CI pass it through a secret with --sign-key-env; give
subscribers PREFIX.pub.

Examples:
  # make the key that signs index.yaml
  kbuild repo keygen keys/index

  # store it as a CI secret and print the public key to publish
  gh secret set KBUILD_SIGN_KEY < keys/index.key && cat keys/index.pub`,
		Args: exactArgs(1, "keygen takes one PREFIX"),
		Run: func(ctx context.Context, env *Env, args []string) error {
			k, err := trust.GenerateKey(rand.Reader)
			if err != nil {
				return err
			}
			if err := trust.WriteKeyPair(args[0], k); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s\n", k.KeyID())
			fmt.Fprintf(env.Stderr, "wrote %s.key (keep it secret) and %s.pub\n", args[0], args[0])
			return nil
		},
	}
}

// newsTime is the generated time of an index that changes what is
// published (a withdrawal, a promotion): epochOrNow, but never before now,
// so that subscribers see a newer index.
func newsTime(env *Env) (time.Time, error) {
	generated, err := epochOrNow(env)
	if err != nil {
		return generated, err
	}
	if now := time.Now().UTC().Truncate(time.Second); generated.Before(now) {
		generated = now
	}
	return generated, nil
}

// epochOrNow returns SOURCE_DATE_EPOCH if set, else the current time, in
// UTC whole seconds.
func epochOrNow(env *Env) (time.Time, error) {
	if env.Getenv("SOURCE_DATE_EPOCH") != "" {
		return builder.SourceDateEpoch(env.Getenv)
	}
	return time.Now().UTC().Truncate(time.Second), nil
}

// tuneGC trades memory for garbage-collection work in the commands that
// read or write an index of 100,000 versions, and in kbuild test (each
// release record Helm stores allocates a fresh gzip writer of about 1 MiB:
// a quarter less CPU on the Foreman stack, bench/README.md): collect less
// often, but stay under a soft limit of 896 MiB. GOGC and GOMEMLIMIT
// override it.
func tuneGC(env *Env) {
	if env.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if env.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(896 << 20)
	}
}
