package main

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
	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/sources"
)

// sourceFlags are the flags of every command that fetches sources.
type sourceFlags struct {
	plainHTTPFlag
	timeoutFlag
	cacheDir       string
	offline        bool
	plainHosts     []string
	maxDownload    int64
	registryConfig string
	pluginTime     time.Duration
}

func (f *sourceFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.cacheDir, "cache-dir", "", "source cache `DIR` (default: the user cache dir, e.g. ~/.cache/kbuild)")
	fs.BoolVar(&f.offline, "offline", false, "use only the source cache; never touch the network")
	f.plainHTTPFlag.addFlags(fs, "")
	fs.StringArrayVar(&f.plainHosts, "plain-http-host", nil, "also talk plain HTTP to this registry HOST[:PORT] (repeat for several)")
	fs.Int64Var(&f.maxDownload, "max-download", 0, "refuse any download larger than this many bytes (default 1 GiB)")
	f.timeoutFlag.addFlagsNote(fs, "a server, registry or git remote", "a whole download must also average 1 MiB/s once this long has passed")
	fs.DurationVar(&f.pluginTime, "plugin-timeout", sources.DefaultPluginTimeout, "end a source or step plugin (and its process group) that runs longer than this")
	fs.StringVar(&f.registryConfig, "registry-config", "", "Docker config file `FILE` with registry credentials (default: the Docker config and credential helpers)")
}

// keychain returns the registry credentials: those of --registry-config,
// or the Docker config and credential helpers.
func (f *sourceFlags) keychain() (authn.Keychain, error) {
	if f.registryConfig == "" {
		return authn.DefaultKeychain, nil
	}
	kc, err := sources.ConfigKeychain(f.registryConfig)
	if err != nil {
		return nil, fmt.Errorf("--registry-config: %w", err)
	}
	return kc, nil
}

// plainPolicy returns the registries --plain-http and --plain-http-host
// allow plain HTTP to.
func (f *sourceFlags) plainPolicy() plainhttp.Policy {
	return plainhttp.Policy{Loopback: f.plainHTTP, Hosts: f.plainHosts}
}

func (f *sourceFlags) fetcher(env *Env) (*sources.Fetcher, error) {
	kc, err := f.keychain()
	if err != nil {
		return nil, err
	}
	opts := []sources.Option{sources.WithOffline(f.offline), sources.WithPlainHTTP(f.plainHTTP), sources.WithPlainHTTPHosts(f.plainHosts...), sources.WithLogger(progress(env)), sources.WithTimeout(f.timeout), sources.WithPluginTimeout(f.pluginTime), sources.WithKeychain(kc)}
	if f.cacheDir != "" {
		opts = append(opts, sources.WithCacheDir(f.cacheDir))
	}
	if f.maxDownload > 0 {
		opts = append(opts, sources.WithMaxDownload(f.maxDownload))
	}
	return sources.New(opts...)
}

// renderFlags are the flags of commands that render charts.
type renderFlags struct {
	kubeVersion string
}

func (f *renderFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeVersion, "kube-version", "", "render charts as for this Kubernetes version, e.g. 1.31 (default "+render.DefaultKubeVersion+", or the newest a chart's kubeVersion allows)")
}

// buildFlags are the flags of commands that build recipes.
type buildFlags struct {
	sourceFlags
	renderFlags
	jobsFlag
	registry string
	out      string
	workDir  string
	adopt    bool
}

// addPublishFlags adds the flags of the commands that build and push
// charts: --work-dir and --adopt.
func (f *buildFlags) addPublishFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.workDir, "work-dir", "", "build each recipe in `DIR`/<package> and keep it for inspection (default: a temporary directory)")
	fs.BoolVar(&f.adopt, "adopt", false, "keep a chart another tool (kubepkg) already published under this version and build when its files and Chart.yaml meaning are the same")
}

func (f *buildFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.registry, "registry", "", "push charts to oci://HOST/PATH (default $KBUILD_REGISTRY; without either, build into the local OCI layout DIST/oci)")
	addOutputFlag(fs, &f.out, "dist", "build records and the local OCI layout to `DIR`")
	f.jobsFlag.addFlags(fs, "recipes and charts built")
	f.sourceFlags.addFlags(fs)
	f.renderFlags.addFlags(fs)
}

// target returns the registry target, or the local layout under DIST/oci.
func (f *buildFlags) target(env *Env) (oci.Target, error) {
	reg := f.registry
	if reg == "" {
		reg = env.Getenv("KBUILD_REGISTRY")
	}
	if reg != "" {
		kc, err := f.keychain()
		if err != nil {
			return nil, err
		}
		return oci.NewRegistryTarget(reg, f.plainHTTP, oci.WithKeychain(kc), oci.WithRegistryTimeout(f.timeout))
	}
	return oci.NewLayoutTarget(filepath.Join(f.out, "oci"), "")
}

func (f *buildFlags) builder(env *Env, t oci.Target, root string, extra ...builder.Option) (*builder.Builder, error) {
	jobs, err := f.count()
	if err != nil {
		return nil, err
	}
	fetch, err := f.fetcher(env)
	if err != nil {
		return nil, err
	}
	epoch, err := builder.SourceDateEpoch(env.Getenv)
	if err != nil {
		return nil, err
	}
	opts := []builder.Option{
		builder.WithOutputDir(f.out),
		builder.WithEpoch(epoch),
		builder.WithJobs(jobs),
		builder.WithLogger(progress(env)),
		builder.WithBuilderID(thisKbuild().ID()),
		builder.WithBuilderSum(thisKbuild().Sum),
		builder.WithRecipesRoot(root),
		builder.WithCommit(builder.RecipesCommit(root)),
		builder.WithKubeVersion(f.kubeVersion),
	}
	if f.workDir != "" {
		opts = append(opts, builder.WithWorkDir(f.workDir))
	}
	if f.adopt {
		opts = append(opts, builder.WithAdopt(true))
	}
	return builder.New(fetch, t, append(opts, extra...)...)
}

// progress returns a logger for long work: lines on stderr when stderr is
// a terminal, nothing in CI and pipes (results go to stdout either way).
func progress(env *Env) func(string, ...any) {
	if terminal(env) {
		return func(format string, args ...any) { fmt.Fprintf(env.Stderr, "  "+format+"\n", args...) }
	}
	if env.Getenv("KBUILD_VERBOSE") != "" {
		return func(format string, args ...any) { fmt.Fprintf(env.Stderr, format+"\n", args...) }
	}
	return func(string, ...any) {}
}

// terminal says whether stderr is a terminal outside CI: where progress
// is shown.
func terminal(env *Env) bool {
	f, ok := env.Stderr.(*os.File)
	if !ok || env.Getenv("CI") != "" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
