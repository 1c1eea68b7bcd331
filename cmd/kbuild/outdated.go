package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/bump"
	"kbuild.dev/kbuild/cmd/kbuild/options"
	"kbuild.dev/kbuild/watch"
)

// lookupsAtOnce bounds the concurrent upstream look-ups of outdated: they
// wait on the network, not the CPU.
const lookupsAtOnce = 32

func newOutdatedCmd() *Command {
	var (
		f      options.SourceFlags
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
			fs.BoolVar(&f.Offline, "offline", false, "use only the source cache; never touch the network (upstream answers are never cached, so this refuses)")
			options.AddPlainHTTPFlag(fs, &f.PlainHTTP, "")
			fs.StringArrayVar(&f.PlainHosts, "plain-http-host", nil, "also talk plain HTTP to this registry HOST[:PORT] (repeat for several)")
			options.AddTimeoutFlagNote(fs, &f.Timeout, "an upstream server, registry or git remote", "a whole answer must also average 1 MiB/s once this long has passed")
			fs.StringVar(&f.RegistryConfig, "registry-config", "", "Docker config file `FILE` with registry credentials (default: the Docker config and credential helpers)")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if err := format.Check(); err != nil {
				return err
			}
			if f.Offline {
				return fmt.Errorf("outdated asks upstream for its versions and kbuild caches no upstream answers: %w", watch.ErrOffline)
			}
			if len(args) == 0 {
				args = []string{"recipes"}
			}
			dirs, err := builder.FindRecipes(args)
			if err != nil {
				return err
			}
			l, err := f.Looker()
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
