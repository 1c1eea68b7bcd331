package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/spec"
)

// Fetcher fetches recipe sources, verifies them against their pins and
// keeps them in a content-addressed cache. It is safe for concurrent use,
// and several processes may share one cache directory.
type Fetcher struct {
	cache         cache
	offline       bool
	client        *http.Client
	maxDownload   int64
	maxExtract    int64
	maxFile       int64
	timeout       time.Duration
	retries       int
	backoff       time.Duration
	keychain      authn.Keychain
	plainHTTP     bool
	plainHosts    []string
	pluginTimeout time.Duration
	logf          func(format string, args ...any)
}

// Option configures a Fetcher.
type Option func(*Fetcher)

// WithCacheDir sets the cache directory. The default is kbuild under
// os.UserCacheDir (such as ~/.cache/kbuild). It is created when first
// written to.
func WithCacheDir(dir string) Option { return func(f *Fetcher) { f.cache.dir = dir } }

// WithOffline makes every fetch that would use the network fail with an
// error wrapping ErrOffline unless the source is in the cache. The default
// is false. Local sources (dir, file:// URLs) and plugins still run.
func WithOffline(offline bool) Option { return func(f *Fetcher) { f.offline = offline } }

// WithMaxDownload bounds the size in bytes of every download, chart
// repository index included. The default is 1 GiB.
func WithMaxDownload(n int64) Option { return func(f *Fetcher) { f.maxDownload = n } }

// WithTimeout sets the idle timeout of the network: how long connecting,
// waiting for a response and every gap in a response body may last
// (registry manifests and blobs read by go-containerregistry included). A
// whole body is further bounded by netdeadline.Budget (one minute plus one
// second per MiB). A git fetch aborts when it transfers less than 1 KB/s
// for this long, and a git command ends after 20 times this long. The
// default is netdeadline.DefaultIdle (20 seconds).
func WithTimeout(d time.Duration) Option { return func(f *Fetcher) { f.timeout = d } }

// WithKeychain sets where OCI registry credentials come from. The default
// is authn.DefaultKeychain (Docker config and credential helpers).
func WithKeychain(k authn.Keychain) Option { return func(f *Fetcher) { f.keychain = k } }

// WithPlainHTTP lets OCI registries on loopback (localhost, 127.0.0.0/8,
// ::1) be reached over plain HTTP. It never applies to other registries,
// such as the public ones a chart's images come from: name those with
// WithPlainHTTPHosts. The default is false (HTTPS, except where
// go-containerregistry already uses HTTP: localhost and loopback).
func WithPlainHTTP(plain bool) Option { return func(f *Fetcher) { f.plainHTTP = plain } }

// WithPlainHTTPHosts lets the OCI registries named (HOST or HOST:PORT, as
// in image references) be reached over plain HTTP. The default is none.
func WithPlainHTTPHosts(hosts ...string) Option {
	return func(f *Fetcher) { f.plainHosts = append(f.plainHosts, hosts...) }
}

// WithLogger sets a function that receives progress messages. The default
// discards them. Messages never contain credentials.
func WithLogger(logf func(format string, args ...any)) Option {
	return func(f *Fetcher) { f.logf = logf }
}

// DefaultPluginTimeout bounds one run of a plugin unless
// WithPluginTimeout says otherwise: two minutes, ample for a plugin that
// renders or fetches one thing, short enough that a hung one fails a CI
// job long before the job's own limit.
const DefaultPluginTimeout = 2 * time.Minute

// WithPluginTimeout bounds one run of a plugin: source plugins here, and
// step plugins in the builder, which reads it with PluginTimeout. Default
// DefaultPluginTimeout.
func WithPluginTimeout(d time.Duration) Option { return func(f *Fetcher) { f.pluginTimeout = d } }

// PluginTimeout is how long one plugin run may take (WithPluginTimeout).
func (f *Fetcher) PluginTimeout() time.Duration { return f.pluginTimeout }

// New returns a Fetcher configured by opts.
func New(opts ...Option) (*Fetcher, error) {
	f := &Fetcher{
		maxDownload:   1 << 30,
		maxExtract:    2 << 30,
		maxFile:       1 << 30,
		timeout:       netdeadline.DefaultIdle,
		retries:       3,
		backoff:       500 * time.Millisecond,
		keychain:      authn.DefaultKeychain,
		pluginTimeout: DefaultPluginTimeout,
		logf:          func(string, ...any) {},
	}
	for _, o := range opts {
		o(f)
	}
	if f.logf == nil {
		f.logf = func(string, ...any) {}
	}
	if f.cache.dir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no cache directory: %w; set one with WithCacheDir", err)
		}
		f.cache.dir = filepath.Join(dir, "kbuild")
	}
	dir, err := filepath.Abs(f.cache.dir)
	if err != nil {
		return nil, fmt.Errorf("cache directory %s: %w", f.cache.dir, err)
	}
	f.cache.dir = dir
	f.cache.logf = f.logf
	if f.client == nil {
		f.client = defaultClient(f.timeout, f.logf)
	}
	switch {
	case f.maxDownload <= 0, f.maxExtract <= 0, f.maxFile <= 0:
		return nil, fmt.Errorf("size limits must be positive, got download %d, extract %d, file %d", f.maxDownload, f.maxExtract, f.maxFile)
	case f.timeout <= 0, f.pluginTimeout <= 0:
		return nil, fmt.Errorf("timeouts must be positive, got %s and plugin %s", f.timeout, f.pluginTimeout)
	case f.retries < 0:
		return nil, fmt.Errorf("retries must not be negative, got %d", f.retries)
	case f.keychain == nil:
		return nil, errors.New("keychain must not be nil")
	}
	return f, nil
}

// PluginInfo is what a source plugin learns about the package being built.
type PluginInfo struct {
	Package string
	Version string
}

// Result is a fetched and verified source.
type Result struct {
	// Path is a local file (a plain url source) or directory (an archive
	// subtree, a chart directory with Chart.yaml at its root, a dir
	// source, a git tree or plugin output); it is empty for images.
	Path string
	// Resolved records what was fetched, from where, and its digest.
	Resolved spec.ResolvedSource
	// Warnings are things the maintainer should know that did not stop
	// the fetch, such as a chart repository index that lists another
	// digest than the archive it serves (which matches the pin).
	Warnings []string
}

// Source kinds as recorded in index.ResolvedSource.Kind.
const (
	KindURL    = "url"
	KindChart  = "chart"
	KindDir    = "dir"
	KindGit    = "git"
	KindImage  = "image"
	KindPlugin = "plugin"
)

// kindOf returns the kind of src (one of the Kind constants), or "" when
// not exactly one kind is set.
func kindOf(src recipe.Source) string {
	kinds := []string{}
	for k, set := range map[string]bool{
		KindURL: src.URL != "", KindChart: src.Chart != nil, KindDir: src.Dir != "",
		KindGit: src.Git != nil, KindImage: src.Image != nil, KindPlugin: src.Plugin != "",
	} {
		if set {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		return ""
	}
	return kinds[0]
}

// Fetch resolves the source called name of the recipe in recipeDir into a
// local path under workDir, which the caller creates and removes. Output
// goes to workDir/name, replacing whatever is there. Downloads are
// verified against their pins and cached; in offline mode a source that
// is not cached fails with an error wrapping ErrOffline.
func (f *Fetcher) Fetch(ctx context.Context, recipeDir, workDir, name string, src recipe.Source, info PluginInfo) (*Result, error) {
	res, err := f.fetch(ctx, recipeDir, workDir, name, src, info)
	if err != nil {
		return nil, fmt.Errorf("source %q: %w", name, err)
	}
	res.Resolved.Name = name
	return res, nil
}

func (f *Fetcher) fetch(ctx context.Context, recipeDir, workDir, name string, src recipe.Source, info PluginInfo) (*Result, error) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return nil, fmt.Errorf("a source name must be a plain file name, got %q", name)
	}
	kind := kindOf(src)
	if kind == KindDir {
		return f.fetchDir(recipeDir, src.Dir)
	}
	if kind == KindImage {
		return f.fetchImage(ctx, recipeDir, src.Image.Ref)
	}
	if kind == "" {
		return nil, errors.New("a source sets exactly one of url, chart, dir, plugin, git or image")
	}
	if workDir == "" {
		return nil, errors.New("no work directory given")
	}
	out, err := filepath.Abs(filepath.Join(workDir, name))
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, fmt.Errorf("clear output directory: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	switch kind {
	case KindURL:
		return f.fetchURL(ctx, recipeDir, out, src)
	case KindChart:
		return f.fetchChart(ctx, recipeDir, out, src.Chart)
	case KindGit:
		return f.fetchGit(ctx, recipeDir, out, src.Git)
	default:
		return f.runPlugin(ctx, recipeDir, out, src, info)
	}
}

func (f *Fetcher) fetchURL(ctx context.Context, recipeDir, out string, src recipe.Source) (*Result, error) {
	digest, err := parseDigest(src.SHA256)
	if err != nil {
		return nil, err
	}
	if recipe.IsArchive(src.URL) {
		if err := f.refusedBefore(digest, extractOptions{strip: src.Strip}); err != nil {
			return nil, fmt.Errorf("%s: %w", redact(src.URL), err)
		}
	}
	blob, err := f.blob(ctx, recipeDir, src.URL, digest, func(got string, n int64) error {
		if got != digest {
			return &DigestMismatchError{What: "download", URL: redact(src.URL), Expected: digest, Got: got, Size: n}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	if !isFileURL(src.URL) {
		f.recordPin(refURL, src.URL, digest)
	}
	res := &Result{Resolved: spec.ResolvedSource{Kind: KindURL, Origin: redact(src.URL), Digest: digest}}
	if !recipe.IsArchive(src.URL) {
		if src.Path != "" || src.Strip != 0 {
			return nil, fmt.Errorf("path and strip apply to archives; %s is not one (%v)", redact(src.URL), recipe.ArchiveExtensions)
		}
		res.Path = filepath.Join(out, fileName(src.URL))
		return res, copyFile(res.Path, blob)
	}
	if err := f.extractBlob(ctx, blob, digest, out, extractOptions{strip: src.Strip}); err != nil {
		return nil, fmt.Errorf("%s: %w", redact(src.URL), err)
	}
	res.Path, err = pick(out, src.Path)
	return res, err
}

// blob returns the verified cache entry for digest, downloading rawURL
// into the cache first when needed. verify checks the downloaded bytes.
func (f *Fetcher) blob(ctx context.Context, recipeDir, rawURL, digest string, verify func(string, int64) error) (*os.File, error) {
	b, err := f.cache.open(digest)
	if !errors.Is(err, errNotCached) {
		return b, err
	}
	if f.offline && !isFileURL(rawURL) {
		return nil, f.offlineError(recipeDir, fmt.Sprintf("%s (%s)", redact(rawURL), digest))
	}
	f.logf("downloading %s", redact(rawURL))
	if _, err := f.download(ctx, rawURL, verify); err != nil {
		return nil, err
	}
	return f.cache.open(digest)
}

func (f *Fetcher) offlineError(recipeDir, what string) error {
	return &NotCachedError{What: what, Cache: f.cache.dir, Recipe: recipeDir}
}

// extractBlob unpacks the cached archive blob (with the given digest) into
// out with the Fetcher's limits. An archive that cannot be unpacked is
// removed from the cache: hostile content is not kept even when it
// matches its pin; an unsafe or oversized one has its refusal remembered
// (see refusedBefore), so that a re-run neither downloads nor extracts it
// again; so is an extraction killed before it finished (see
// interruptedBefore). On any failure, and when ctx is done, what was written
// under out is removed (out itself is left, empty).
func (f *Fetcher) extractBlob(ctx context.Context, blob *os.File, digest, out string, o extractOptions) error {
	fi, err := blob.Stat()
	if err != nil {
		return err
	}
	if err := f.refusedBefore(digest, o); err != nil {
		return err
	}
	done := markExtracting(f.markerPath(digest, o))
	defer done()
	o.maxTotal, o.maxFile = f.maxExtract, f.maxFile
	if err := extract(ctx, blob, fi.Size(), out, o); err != nil {
		if ctx.Err() == nil {
			f.cache.remove(digest)
			if errors.Is(err, ErrUnsafe) || errors.Is(err, ErrTooLarge) {
				f.rememberRefusal(digest, o, err)
			}
		}
		if entries, rerr := os.ReadDir(out); rerr == nil {
			for _, e := range entries {
				os.RemoveAll(filepath.Join(out, e.Name()))
			}
		}
		return err
	}
	return nil
}

// pick returns the file or directory p inside root, refusing paths that
// leave root, also through symlinks.
func pick(root, p string) (string, error) {
	if p == "" {
		return root, nil
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return "", fmt.Errorf("path %q leaves the archive: %w", p, ErrUnsafe)
	}
	rroot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	full := filepath.Join(rroot, filepath.FromSlash(p))
	if _, err := os.Lstat(full); err != nil {
		return "", fmt.Errorf("path %q is not in the archive (check strip and path)", p)
	}
	if err := checkInside(rroot, full); err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	return filepath.EvalSymlinks(full)
}

// fileName returns the last element of a URL's path, or "download".
func fileName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "download"
	}
	base := path.Base(u.Path)
	if base == "." || base == "/" || base == ".." || base == "" {
		return "download"
	}
	return base
}

func copyFile(dst string, src io.Reader) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Add stores a local file in the cache under its sha256 and returns the
// digest ("sha256:<hex>"), so that a recipe pinning it builds offline
// (`kbuild cache add FILE`).
func (f *Fetcher) Add(ctx context.Context, file string) (string, error) {
	in, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("add to cache: %w", err)
	}
	defer in.Close()
	d, err := f.cache.put(ctxReader{ctx, in}, -1, nil)
	if err != nil {
		return "", fmt.Errorf("add %s to cache: %w", file, err)
	}
	return d, nil
}

// AddFrom is Add for a file downloaded from url by other means: it also
// records the file as what url resolves to, so that pinning a url source
// offline (kbuild init --offline) finds it, as after a download. With
// url "" it is Add: there is no origin to record.
func (f *Fetcher) AddFrom(ctx context.Context, file, url string) (string, error) {
	if url == "" {
		return f.Add(ctx, file)
	}
	if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		return "", fmt.Errorf("%s is not an http(s) URL: only a download has an origin to record", recipe.Quote(url))
	}
	d, err := f.Add(ctx, file)
	if err != nil {
		return "", err
	}
	f.recordPin(refURL, url, d)
	return d, nil
}
