package options

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/cmd/kbuild/cli"
	"kbuild.dev/kbuild/internal/kbuildversion"
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/watch"
)

// SourceFlags are the flags of every command that fetches sources.
type SourceFlags struct {
	PlainHTTP      bool
	Timeout        time.Duration
	CacheDir       string
	Offline        bool
	PlainHosts     []string
	MaxDownload    int64
	RegistryConfig string
	PluginTime     time.Duration
}

// AddFlags adds --cache-dir, --offline, --plain-http(-host),
// --max-download, --timeout, --plugin-timeout and --registry-config.
func (f *SourceFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.CacheDir, "cache-dir", "", "source cache `DIR` (default: the user cache dir, e.g. ~/.cache/kbuild)")
	fs.BoolVar(&f.Offline, "offline", false, "use only the source cache; never touch the network")
	AddPlainHTTPFlag(fs, &f.PlainHTTP, "")
	fs.StringArrayVar(&f.PlainHosts, "plain-http-host", nil, "also talk plain HTTP to this registry HOST[:PORT] (repeat for several)")
	fs.Int64Var(&f.MaxDownload, "max-download", 0, "refuse any download larger than this many bytes (default 1 GiB)")
	AddTimeoutFlagNote(fs, &f.Timeout, "a server, registry or git remote", "a whole download must also average 1 MiB/s once this long has passed")
	fs.DurationVar(&f.PluginTime, "plugin-timeout", sources.DefaultPluginTimeout, "end a source or step plugin (and its process group) that runs longer than this")
	fs.StringVar(&f.RegistryConfig, "registry-config", "", "Docker config file `FILE` with registry credentials (default: the Docker config and credential helpers)")
}

// Keychain returns the registry credentials: those of --registry-config,
// or the Docker config and credential helpers.
func (f *SourceFlags) Keychain() (authn.Keychain, error) {
	if f.RegistryConfig == "" {
		return authn.DefaultKeychain, nil
	}
	kc, err := sources.ConfigKeychain(f.RegistryConfig)
	if err != nil {
		return nil, fmt.Errorf("--registry-config: %w", err)
	}
	return kc, nil
}

// PlainPolicy returns the registries --plain-http and --plain-http-host
// allow plain HTTP to.
func (f *SourceFlags) PlainPolicy() plainhttp.Policy {
	return plainhttp.Policy{Loopback: f.PlainHTTP, Hosts: f.PlainHosts}
}

// Fetcher returns the source fetcher the flags describe, logging
// progress (Progress).
func (f *SourceFlags) Fetcher(env *cli.Env) (*sources.Fetcher, error) {
	kc, err := f.Keychain()
	if err != nil {
		return nil, err
	}
	opts := []sources.Option{sources.WithCacheDir(f.CacheDir), sources.WithOffline(f.Offline), sources.WithPlainHTTP(f.PlainHTTP), sources.WithPlainHTTPHosts(f.PlainHosts...), sources.WithLogger(Progress(env)), sources.WithTimeout(f.Timeout), sources.WithPluginTimeout(f.PluginTime), sources.WithKeychain(kc)}
	if f.MaxDownload > 0 {
		opts = append(opts, sources.WithMaxDownload(f.MaxDownload))
	}
	return sources.New(opts...)
}

// Looker returns the upstream look-ups (package watch) the flags
// describe.
func (f *SourceFlags) Looker() (*watch.Looker, error) {
	kc, err := f.Keychain()
	if err != nil {
		return nil, err
	}
	return watch.NewLooker(watch.WithTimeout(f.Timeout), watch.WithOffline(f.Offline), watch.WithKeychain(kc), watch.WithPlainHTTP(f.PlainPolicy())), nil
}

// BuildFlags are the flags of commands that build recipes.
type BuildFlags struct {
	SourceFlags
	JobsFlag
	Registry string
	Out      string
	WorkDir  string
	Adopt    bool
	// KubeVersion is the Kubernetes version charts render as ("" for
	// the default).
	KubeVersion string
}

// AddPublishFlags adds the flags of the commands that build and push
// charts: --work-dir and --adopt.
func (f *BuildFlags) AddPublishFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.WorkDir, "work-dir", "", "build each recipe in `DIR`/<package> and keep it for inspection (default: a temporary directory)")
	fs.BoolVar(&f.Adopt, "adopt", false, "keep a chart another tool (kubepkg) already published under this version and build when its files and Chart.yaml meaning are the same")
}

// AddFlags adds --registry, -o, -j and the prepare flags (AddPrepareFlags).
func (f *BuildFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Registry, "registry", "", "push charts to oci://HOST/PATH (default $KBUILD_REGISTRY; without either, build into the local OCI layout DIST/oci)")
	AddOutputFlag(fs, &f.Out, "dist", "build records and the local OCI layout to `DIR`")
	f.JobsFlag.AddFlags(fs, "recipes and charts built")
	f.AddPrepareFlags(fs)
}

// AddPrepareFlags adds the source flags and --kube-version: those of the
// commands that prepare charts (builder.Prepare) without pushing them.
func (f *BuildFlags) AddPrepareFlags(fs *pflag.FlagSet) {
	f.SourceFlags.AddFlags(fs)
	fs.StringVar(&f.KubeVersion, "kube-version", "", "render charts as for this Kubernetes version, e.g. 1.31 (default "+render.DefaultKubeVersion+", or the newest a chart's kubeVersion allows)")
}

// Target returns the registry target, or the local layout under DIST/oci.
func (f *BuildFlags) Target(env *cli.Env) (oci.Target, error) {
	reg := f.Registry
	if reg == "" {
		reg = env.Getenv("KBUILD_REGISTRY")
	}
	if reg != "" {
		kc, err := f.Keychain()
		if err != nil {
			return nil, err
		}
		return oci.NewRegistryTarget(reg, f.PlainHTTP, oci.WithKeychain(kc), oci.WithRegistryTimeout(f.Timeout))
	}
	return oci.NewLayoutTarget(filepath.Join(f.Out, "oci"), "")
}

// Builder returns the builder the flags describe, pushing to t (nil
// for none), for the recipes under root, stamped as built by kb, with
// the extra options last.
func (f *BuildFlags) Builder(env *cli.Env, kb kbuildversion.Version, t oci.Target, root string, extra ...builder.Option) (*builder.Builder, error) {
	jobs, err := f.Count()
	if err != nil {
		return nil, err
	}
	fetch, err := f.Fetcher(env)
	if err != nil {
		return nil, err
	}
	epoch, err := builder.SourceDateEpoch(env.Getenv)
	if err != nil {
		return nil, err
	}
	opts := []builder.Option{
		builder.WithOutputDir(f.Out),
		builder.WithEpoch(epoch),
		builder.WithJobs(jobs),
		builder.WithLogger(Progress(env)),
		builder.WithBuilderID(kb.ID()),
		builder.WithBuilderSum(kb.Sum),
		builder.WithRecipesRoot(root),
		builder.WithCommit(builder.RecipesCommit(root)),
		builder.WithKubeVersion(f.KubeVersion),
		builder.WithWorkDir(f.WorkDir),
		builder.WithAdopt(f.Adopt),
	}
	return builder.New(fetch, t, append(opts, extra...)...)
}

// RecipesBuilder finds the recipe directories args name
// (builder.FindRecipes) and returns them with the builder the flags
// describe for them (Builder, with the recipes under their common root).
func (f *BuildFlags) RecipesBuilder(env *cli.Env, kb kbuildversion.Version, t oci.Target, args []string, extra ...builder.Option) ([]string, *builder.Builder, error) {
	dirs, err := builder.FindRecipes(args)
	if err != nil {
		return nil, nil, err
	}
	b, err := f.Builder(env, kb, t, builder.CommonRoot(dirs), extra...)
	return dirs, b, err
}

// Progress returns a logger for long work: lines on stderr when stderr is
// a terminal, nothing in CI and pipes (results go to stdout either way).
func Progress(env *cli.Env) func(string, ...any) {
	if Terminal(env) {
		return func(format string, args ...any) { fmt.Fprintf(env.Stderr, "  "+format+"\n", args...) }
	}
	if env.Getenv("KBUILD_VERBOSE") != "" {
		return func(format string, args ...any) { fmt.Fprintf(env.Stderr, format+"\n", args...) }
	}
	return func(string, ...any) {}
}

// Terminal says whether stderr is a terminal outside CI: where progress
// is shown.
func Terminal(env *cli.Env) bool {
	f, ok := env.Stderr.(*os.File)
	if !ok || env.Getenv("CI") != "" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
