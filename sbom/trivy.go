package sbom

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"kbuild.dev/kbuild/internal/tailbuffer"
)

// TrivyInstall is the command that installs the Trivy kbuild is tested
// with. Go 1.26 needs the jsonv2 experiment to build it; it takes about 12
// minutes on 2 cores.
const TrivyInstall = "GOEXPERIMENT=jsonv2 go install github.com/aquasecurity/trivy/cmd/trivy@v0.74.0"

// ErrTrivyNotFound is returned (wrapped) by NewTrivy when the trivy
// program cannot be found.
var ErrTrivyNotFound = errors.New("trivy not found")

// ErrDBFetch is wrapped by a scan's error when Trivy could not download
// or update its vulnerability database (not offline): scanning offline
// with a database already in Trivy's cache avoids the download.
var ErrDBFetch = errors.New("fetching the vulnerability database")

// ErrIndexDigest is wrapped by the error about an index entry whose spec
// does not match its digest: the index was edited after it was written,
// and writing it again from its build records mends it.
var ErrIndexDigest = errors.New("does not match its spec")

// ErrNoDB is wrapped by an offline scan's *TrivyError when Trivy's cache
// directory holds no vulnerability database: scanning once online, or
// Trivy's own download of the database into that directory, fills it.
var ErrNoDB = errors.New("offline, and there is no vulnerability DB in the cache directory")

// offlineFlags keep Trivy from touching the network beyond the registry
// that holds the image.
var offlineFlags = []string{"--skip-db-update", "--skip-java-db-update", "--offline-scan", "--skip-version-check", "--disable-telemetry"}

// maxTrivyOutput caps what is read of one Trivy report.
const maxTrivyOutput = 256 << 20

// Trivy runs the trivy program. It is safe for concurrent use: each image
// is scanned by its own process, with an in-memory layer cache so that
// processes do not wait on each other's cache lock.
type Trivy struct {
	path     string
	cacheDir string
	offline  bool

	mu      sync.Mutex
	dbReady bool
}

var _ VulnScanner = (*Trivy)(nil)

// TrivyOption configures NewTrivy.
type TrivyOption func(*Trivy)

// WithTrivyPath sets the trivy program to run, a path or a name looked up
// on PATH; "" keeps the default. Default: "trivy" on PATH.
func WithTrivyPath(p string) TrivyOption {
	return func(t *Trivy) { t.path = cmp.Or(p, t.path) }
}

// WithTrivyCacheDir passes --cache-dir DIR to every trivy run: where its
// vulnerability database is. Default: Trivy's own (~/.cache/trivy).
func WithTrivyCacheDir(dir string) TrivyOption {
	return func(t *Trivy) { t.cacheDir = dir }
}

// WithTrivyOffline makes scans use the database already in the cache
// directory and touch no network but the images' registries (--skip-db-update
// --skip-java-db-update --offline-scan --skip-version-check
// --disable-telemetry). Default: false, the database is downloaded or
// updated once before the first scan. Image BOMs (ImageBOM) need no
// database and are always made offline.
func WithTrivyOffline(offline bool) TrivyOption {
	return func(t *Trivy) { t.offline = offline }
}

// NewTrivy finds the trivy program and returns a runner for it. A missing
// program is an error wrapping ErrTrivyNotFound that says how to install it.
func NewTrivy(opts ...TrivyOption) (*Trivy, error) {
	t := &Trivy{path: "trivy"}
	for _, o := range opts {
		o(t)
	}
	p, err := exec.LookPath(t.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v; install it with `%s` (Go 1.26 needs that experiment; it takes about 12 minutes on 2 cores), then put it on PATH", ErrTrivyNotFound, err, TrivyInstall)
	}
	t.path = p
	return t, nil
}

// Path returns the trivy program that runs.
func (t *Trivy) Path() string { return t.path }

// TrivyError is a trivy run that failed or printed something that is not
// its report: the image, the command line and the end of trivy's stderr.
type TrivyError struct {
	Image  string
	Args   []string
	Stderr string
	Err    error
	// Cause is what kbuild recognises of the failure (ErrNoDB), or nil.
	Cause error
}

// Error says which image trivy failed on, how, what to do when known, the
// command line and the end of trivy's stderr.
func (e *TrivyError) Error() string {
	var b strings.Builder
	if e.Image != "" {
		fmt.Fprintf(&b, "trivy on image %s: %v", e.Image, e.Err)
	} else {
		fmt.Fprintf(&b, "trivy: %v", e.Err)
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, "; %v", e.Cause)
	}
	fmt.Fprintf(&b, "; the command was: %s", strings.Join(e.Args, " "))
	if s := strings.TrimSpace(e.Stderr); s != "" {
		b.WriteString("; trivy's stderr ends with:\n  ")
		b.WriteString(strings.ReplaceAll(s, "\n", "\n  "))
	} else {
		b.WriteString("; trivy printed nothing on stderr")
	}
	return b.String()
}

// Unwrap returns the underlying failure (the process's exit error or the
// decoding error) and the Cause when there is one.
func (e *TrivyError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

func (t *Trivy) commonArgs() []string {
	var a []string
	if t.cacheDir != "" {
		a = append(a, "--cache-dir", t.cacheDir)
	}
	return a
}

// run runs trivy with args and returns its stdout and the end of its
// stderr.
func (t *Trivy) run(ctx context.Context, image string, args ...string) ([]byte, string, error) {
	cmd := exec.CommandContext(ctx, t.path, args...)
	cmd.Env = os.Environ()
	if image != "" && loopbackImage(image) {
		// The registry on loopback speaks plain HTTP, or HTTPS with a
		// certificate nobody signed.
		cmd.Env = append(cmd.Env, "TRIVY_INSECURE=true")
	}
	stdout := &cappedBuffer{max: maxTrivyOutput}
	stderr := tailbuffer.New(4 << 10)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	full := append([]string{t.path}, args...)
	if err != nil {
		return nil, "", &TrivyError{Image: image, Args: full, Stderr: stderr.String(), Err: err}
	}
	if stdout.over {
		return nil, "", &TrivyError{Image: image, Args: full, Stderr: stderr.String(), Err: fmt.Errorf("report larger than %d bytes", maxTrivyOutput)}
	}
	return stdout.Bytes(), stderr.String(), nil
}

// ImageBOM returns Trivy's CycloneDX BOM of the image's contents (trivy
// image --format cyclonedx), made offline.
func (t *Trivy) ImageBOM(ctx context.Context, ref string) (*cdx.BOM, error) {
	args := []string{"image", "--format", "cyclonedx", "--quiet", "--image-src", "remote", "--cache-backend", "memory"}
	args = append(args, offlineFlags...)
	args = append(args, t.commonArgs()...)
	args = append(args, ref)
	out, stderr, err := t.run(ctx, ref, args...)
	if err != nil {
		return nil, err
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(out), cdx.BOMFileFormatJSON).Decode(&bom); err != nil || bom.BOMFormat != cdx.BOMFormat {
		if err == nil {
			err = fmt.Errorf("bomFormat %q, expected %q", bom.BOMFormat, cdx.BOMFormat)
		}
		return nil, &TrivyError{Image: ref, Args: append([]string{t.path}, args...), Stderr: stderr, Err: fmt.Errorf("printed no CycloneDX BOM: %v (stdout starts with %q)", err, head(out, 80))}
	}
	return &bom, nil
}

// ScanImage scans one image for vulnerabilities in its OS and language
// packages (trivy image --format json --scanners vuln).
func (t *Trivy) ScanImage(ctx context.Context, ref string) ([]Vulnerability, error) {
	if err := t.prepareDB(ctx); err != nil {
		return nil, err
	}
	args := []string{"image", "--format", "json", "--scanners", "vuln", "--quiet", "--image-src", "remote", "--cache-backend", "memory"}
	if t.offline {
		args = append(args, offlineFlags...)
	} else {
		// prepareDB fetched the database once for all scans.
		args = append(args, "--skip-db-update")
	}
	args = append(args, t.commonArgs()...)
	args = append(args, ref)
	out, stderr, err := t.run(ctx, ref, args...)
	var te *TrivyError
	if errors.As(err, &te) && t.offline && strings.Contains(te.Stderr, "--skip-db-update cannot be specified on the first run") {
		te.Cause = ErrNoDB
	}
	if err != nil {
		return nil, err
	}
	vulns, err := ParseTrivyReport(out)
	if err != nil {
		return nil, &TrivyError{Image: ref, Args: append([]string{t.path}, args...), Stderr: stderr, Err: fmt.Errorf("printed no JSON report: %w", err)}
	}
	return vulns, nil
}

// prepareDB downloads or updates the vulnerability database once, unless
// offline, so that parallel scans do not race to fetch it.
func (t *Trivy) prepareDB(ctx context.Context) error {
	if t.offline {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dbReady {
		return nil
	}
	args := append([]string{"image", "--download-db-only", "--quiet", "--skip-version-check", "--disable-telemetry"}, t.commonArgs()...)
	if _, _, err := t.run(ctx, "", args...); err != nil {
		return fmt.Errorf("%w: %w", ErrDBFetch, err)
	}
	t.dbReady = true
	return nil
}

// Info returns Trivy's version and the vulnerability database in the cache
// directory (trivy version --format json).
func (t *Trivy) Info(ctx context.Context) (ScannerInfo, error) {
	args := append([]string{"version", "--format", "json"}, t.commonArgs()...)
	out, stderr, err := t.run(ctx, "", args...)
	if err != nil {
		return ScannerInfo{}, err
	}
	var v struct {
		Version         string
		VulnerabilityDB *struct {
			UpdatedAt time.Time
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return ScannerInfo{}, &TrivyError{Args: append([]string{t.path}, args...), Stderr: stderr, Err: fmt.Errorf("version printed no JSON: %v (stdout starts with %q)", err, head(out, 80))}
	}
	info := ScannerInfo{Name: "trivy", Version: v.Version}
	if v.VulnerabilityDB != nil && !v.VulnerabilityDB.UpdatedAt.IsZero() {
		info.DBUpdatedAt = v.VulnerabilityDB.UpdatedAt.UTC().Format(time.RFC3339)
	}
	return info, nil
}

// ParseTrivyReport reads the vulnerabilities of a Trivy JSON report
// (Results[].Vulnerabilities[]). A report without results, or with results
// without vulnerabilities, has none; anything that is not a JSON object is
// an error. Exact duplicates (same target, ID, package and version) count
// once. The result is sorted by severity (highest first), then ID, package,
// installed version and target.
func ParseTrivyReport(data []byte) ([]Vulnerability, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("report is not a JSON object (stdout starts with %q)", head(data, 80))
	}
	var r struct {
		Results []struct {
			Target          string
			Vulnerabilities []struct {
				VulnerabilityID  string
				PkgName          string
				InstalledVersion string
				FixedVersion     string
				Severity         string
			}
		}
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding report: %w", err)
	}
	seen := map[Vulnerability]bool{}
	out := []Vulnerability{}
	for _, res := range r.Results {
		for _, v := range res.Vulnerabilities {
			if v.VulnerabilityID == "" {
				continue
			}
			x := Vulnerability{
				ID:               v.VulnerabilityID,
				Severity:         severityOf(v.Severity).String(),
				Package:          v.PkgName,
				InstalledVersion: v.InstalledVersion,
				FixedVersion:     v.FixedVersion,
				Target:           res.Target,
			}
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sortVulnerabilities(out)
	return out, nil
}

func sortVulnerabilities(vs []Vulnerability) {
	sort.Slice(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if sa, sb := severityOf(a.Severity), severityOf(b.Severity); sa != sb {
			return sa > sb
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.InstalledVersion != b.InstalledVersion {
			return a.InstalledVersion < b.InstalledVersion
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.FixedVersion < b.FixedVersion
	})
}

// loopbackImage reports whether an image's registry is on loopback.
func loopbackImage(ref string) bool {
	r, err := parseImageRef(ref)
	if err != nil {
		return false
	}
	host := r.Registry
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// cappedBuffer keeps up to max bytes and notes whether more came.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

func head(p []byte, n int) []byte {
	if len(p) <= n {
		return p
	}
	return p[:n]
}
