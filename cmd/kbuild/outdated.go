package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/watch"
)

// lookupsAtOnce bounds the concurrent upstream look-ups of outdated: they
// wait on the network, not the CPU.
const lookupsAtOnce = 32

// watchFlags are the flags of the commands that look upstream.
type watchFlags struct {
	options.TimeoutFlag
	plainHTTP      plainhttp.Policy
	registryConfig string
	offline        bool
}

func (f *watchFlags) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.offline, "offline", false, "use only the source cache; never touch the network (upstream answers are never cached, so this refuses)")
	options.AddPlainHTTPFlag(fs, &f.plainHTTP.Loopback, "")
	fs.StringArrayVar(&f.plainHTTP.Hosts, "plain-http-host", nil, "also talk plain HTTP to this registry HOST[:PORT] (repeat for several)")
	f.TimeoutFlag.AddFlagsNote(fs, "an upstream server, registry or git remote", "a whole answer must also average 1 MiB/s once this long has passed")
	fs.StringVar(&f.registryConfig, "registry-config", "", "Docker config file `FILE` with registry credentials (default: the Docker config and credential helpers)")
}

// looker returns the upstream look-ups the flags describe.
func (f *watchFlags) looker() (*watch.Looker, error) {
	kc, err := (&options.SourceFlags{RegistryConfig: f.registryConfig}).Keychain()
	if err != nil {
		return nil, err
	}
	return watch.NewLooker(watch.WithTimeout(f.Timeout), watch.WithOffline(f.offline), watch.WithKeychain(kc),
		watch.WithPlainHTTP(f.plainHTTP)), nil
}

func newOutdatedCmd() *Command {
	var (
		f      watchFlags
		format options.FormatFlag
	)
	return &Command{
		Use:     "outdated [RECIPES...] [--format text|json]",
		Summary: "List the recipes whose upstream has a newer version their watch rule allows.",
		Help: `outdated reads each recipe's watch.yaml (docs/watch.md), looks at its
upstreams (a Helm repository index, OCI tags, git tags, GitHub releases, an
HTTP directory listing) concurrently (32 at once, each distinct upstream
once), and prints per recipe and upstream the
version the recipe has and the newest one the rule allows (its pattern,
prefixes, semver constraint and pre-release policy). RECIPES are recipe
directories or directories holding them (default: recipes).

Every answer is bounded in size, pages and time (--timeout); a redirect to
another host or off loopback is refused. A recipe without watch.yaml is
listed as unwatched and does not fail the run.

Exit status: 0 when everything is up to date, 4 when every recipe was
checked and at least one is outdated, 1 when a recipe or upstream could not
be checked. --offline refuses: upstream answers are never cached.

Examples:
  # what has a newer upstream release
  kbuild outdated

  # for a bot: one JSON document, exit 6 when there is work
  kbuild outdated recipes/kubevirt recipes/cdi --format json`,
		Flags: func(fs *pflag.FlagSet) {
			format.AddFlags(fs, false, "text", "json")
			f.addFlags(fs)
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if err := format.Check(); err != nil {
				return err
			}
			if f.offline {
				return fmt.Errorf("outdated asks upstream for its versions and kbuild caches no upstream answers: %w", watch.ErrOffline)
			}
			if len(args) == 0 {
				args = []string{"recipes"}
			}
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			l, err := f.looker()
			if err != nil {
				return err
			}
			reports := bump.Outdated(ctx, l, dirs, lookupsAtOnce)
			write := watch.WriteTable
			if format.Format == "json" {
				write = watch.WriteJSON
			}
			if err := write(env.Stdout, reports); err != nil {
				return err
			}
			errs, outdated := watch.Tally(reports)
			for _, e := range errs {
				env.Warnf("error: %s", e)
			}
			switch {
			case len(errs) > 0:
				return &exitError{Code: 1}
			case outdated > 0:
				return &exitError{Code: exitOutdated}
			}
			return nil
		},
	}
}
