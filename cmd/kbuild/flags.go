package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/sources"
)

// sourceFlags are the flags of every command that fetches sources.
type sourceFlags struct {
	cacheDir    string
	offline     bool
	plainHTTP   bool
	maxDownload int64
	timeout     time.Duration
	pluginTime  time.Duration
}

func (f *sourceFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.cacheDir, "cache-dir", "", "source cache (default: the user cache dir, e.g. ~/.cache/kbuild)")
	fs.BoolVar(&f.offline, "offline", false, "use only the source cache; never touch the network")
	fs.BoolVar(&f.plainHTTP, "plain-http", false, "talk plain HTTP to OCI registries (loopback registries in tests)")
	fs.Int64Var(&f.maxDownload, "max-download", 0, "refuse any download larger than this many bytes (default 1 GiB)")
	fs.DurationVar(&f.timeout, "timeout", netdeadline.DefaultIdle, "give up on a server, registry or git remote that sends nothing for this long (a whole download also gets 1 min + 1 s per MiB)")
	fs.DurationVar(&f.pluginTime, "plugin-timeout", 10*time.Minute, "end a source plugin (and its process group) that runs longer than this")
}

func (f *sourceFlags) fetcher(env *Env) (*sources.Fetcher, error) {
	opts := []sources.Option{sources.WithOffline(f.offline), sources.WithPlainHTTP(f.plainHTTP), sources.WithLogger(progress(env)), sources.WithTimeout(f.timeout), sources.WithPluginTimeout(f.pluginTime)}
	if f.cacheDir != "" {
		opts = append(opts, sources.WithCacheDir(f.cacheDir))
	}
	if f.maxDownload > 0 {
		opts = append(opts, sources.WithMaxDownload(f.maxDownload))
	}
	return sources.New(opts...)
}

// buildFlags are the flags of commands that build recipes.
type buildFlags struct {
	sourceFlags
	registry string
	out      string
	jobs     int
}

func (f *buildFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.registry, "registry", "", "push charts to oci://HOST/PATH (default $KBUILD_REGISTRY; without either, build into the local OCI layout DIST/oci)")
	fs.StringVarP(&f.out, "output", "o", "dist", "directory for build records and the local OCI layout")
	fs.IntVarP(&f.jobs, "jobs", "j", runtime.NumCPU(), "recipes and charts built at once")
	f.sourceFlags.addFlags(fs)
}

// target returns the registry target, or the local layout under DIST/oci.
func (f *buildFlags) target(env *Env) (builder.Target, error) {
	reg := f.registry
	if reg == "" {
		reg = env.Getenv("KBUILD_REGISTRY")
	}
	if reg != "" {
		return builder.NewRegistryTarget(reg, f.plainHTTP)
	}
	return builder.NewLayoutTarget(filepath.Join(f.out, "oci"), "")
}

func (f *buildFlags) builder(env *Env, t builder.Target, root string, extra ...builder.Option) (*builder.Builder, error) {
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
		builder.WithJobs(f.jobs),
		builder.WithLogger(progress(env)),
		builder.WithBuilderID("kbuild " + version),
		builder.WithRecipesRoot(root),
		builder.WithCommit(gitCommit(root)),
	}
	return builder.New(fetch, t, append(opts, extra...)...)
}

// progress returns a logger for long work: lines on stderr when stderr is
// a terminal, nothing in CI and pipes (results go to stdout either way).
func progress(env *Env) func(string, ...any) {
	if f, ok := env.Stderr.(*os.File); ok && env.Getenv("CI") == "" {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return func(format string, args ...any) { fmt.Fprintf(env.Stderr, "  "+format+"\n", args...) }
		}
	}
	if env.Getenv("KBUILD_VERBOSE") != "" {
		return func(format string, args ...any) { fmt.Fprintf(env.Stderr, format+"\n", args...) }
	}
	return func(string, ...any) {}
}
