package sbom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"text/tabwriter"
)

// VulnScanner scans container images for known vulnerabilities. Trivy is
// the implementation; tests may use fakes.
type VulnScanner interface {
	// ScanImage returns the vulnerabilities found in the image ref (pinned
	// by digest).
	ScanImage(ctx context.Context, ref string) ([]Vulnerability, error)
	// Info names the scanner and the vulnerability database it used.
	Info(ctx context.Context) (ScannerInfo, error)
}

// Vulnerability is one finding in one image.
type Vulnerability struct {
	ID string `json:"id"`
	// Severity is CRITICAL, HIGH, MEDIUM, LOW or UNKNOWN.
	Severity         string `json:"severity"`
	Package          string `json:"package"`
	InstalledVersion string `json:"installedVersion"`
	FixedVersion     string `json:"fixedVersion,omitempty"`
	// Target is what the package was found in, for example "img (alpine
	// 3.22.2)" or a lock file's path.
	Target string `json:"target,omitempty"`
}

// ScannerInfo names the scanner and the vulnerability database a scan used.
type ScannerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// DBUpdatedAt is when the vulnerability database was built (RFC 3339,
	// UTC); empty when the scanner did not say.
	DBUpdatedAt string `json:"dbUpdatedAt,omitempty"`
}

// Counts are numbers of vulnerabilities by severity.
type Counts struct {
	Critical int `json:"critical"`
	High     int `json:"high"`
	Medium   int `json:"medium"`
	Low      int `json:"low"`
	Unknown  int `json:"unknown"`
}

// Of returns the count for one severity.
func (c Counts) Of(s Severity) int {
	switch s {
	case SeverityCritical:
		return c.Critical
	case SeverityHigh:
		return c.High
	case SeverityMedium:
		return c.Medium
	case SeverityLow:
		return c.Low
	default:
		return c.Unknown
	}
}

func (c *Counts) add(s Severity, n int) {
	switch s {
	case SeverityCritical:
		c.Critical += n
	case SeverityHigh:
		c.High += n
	case SeverityMedium:
		c.Medium += n
	case SeverityLow:
		c.Low += n
	default:
		c.Unknown += n
	}
}

// Report is the result of Scan. Its JSON form (WriteJSON) has a stable
// field order and sorted lists; the publisher puts it on the site.
type Report struct {
	Scanner ScannerInfo `json:"scanner"`
	// Packages are the scanned builds, sorted by name, version and build.
	Packages []PackageResult `json:"packages"`
	// Images are the distinct pinned images scanned, sorted.
	Images []ImageResult `json:"images"`
}

// PackageResult is what one build runs.
type PackageResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Build   int    `json:"build"`
	// Images are the build's images pinned by digest, scanned; sorted.
	Images []string `json:"images,omitempty"`
	// Unpinned are the build's images without a digest, not scanned.
	Unpinned []string `json:"unpinned,omitempty"`
	// NoImages is true when the build installs charts but declares no
	// images, so nothing of it was scanned.
	NoImages bool `json:"noImages,omitempty"`
	// Counts add up the vulnerabilities of Images.
	Counts Counts `json:"counts"`
}

// Label returns "<name>@<version>", how the table names the package.
func (p *PackageResult) Label() string { return p.Name + "@" + p.Version }

// ImageResult is the scan of one image.
type ImageResult struct {
	Image           string          `json:"image"`
	Counts          Counts          `json:"counts"`
	Vulnerabilities []Vulnerability `json:"vulnerabilities"`
}

// ScanOption configures Scan.
type ScanOption func(*scanConfig)

type scanConfig struct{ jobs int }

// WithJobs sets how many images are scanned at once. Default: the number
// of CPUs.
func WithJobs(n int) ScanOption {
	return func(c *scanConfig) { c.jobs = n }
}

// Scan scans every distinct image pinned by digest that builds run, in
// parallel, and reports what was found. Images that are not pinned, and
// builds with charts but no images, are listed in the report, not scanned.
// The first scanner error stops the scan.
func Scan(ctx context.Context, builds []Build, s VulnScanner, opts ...ScanOption) (*Report, error) {
	cfg := scanConfig{jobs: runtime.NumCPU()}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.jobs < 1 {
		return nil, fmt.Errorf("sbom: %d parallel scans: expected at least 1", cfg.jobs)
	}
	r := &Report{Packages: []PackageResult{}, Images: []ImageResult{}}
	images := map[string]bool{}
	for i := range builds {
		b := &builds[i]
		p := PackageResult{Name: b.Name, Version: b.Spec.Version, Build: b.Spec.Build}
		seen := map[string]bool{}
		for _, ref := range b.Spec.Images {
			ir, err := parseImageRef(ref)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b, err)
			}
			full := ir.String()
			if seen[full] {
				continue
			}
			seen[full] = true
			if ir.Digest == "" {
				p.Unpinned = append(p.Unpinned, ref)
				continue
			}
			p.Images = append(p.Images, full)
			images[full] = true
		}
		sort.Strings(p.Images)
		sort.Strings(p.Unpinned)
		p.NoImages = len(b.Spec.Images) == 0 && len(b.charts()) > 0
		r.Packages = append(r.Packages, p)
	}
	sort.SliceStable(r.Packages, func(i, j int) bool {
		a, b := r.Packages[i], r.Packages[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if c := compareVersions(a.Version, b.Version); c != 0 {
			return c < 0
		}
		return a.Build < b.Build
	})

	refs := make([]string, 0, len(images))
	for ref := range images {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	results, err := scanAll(ctx, refs, s, cfg.jobs)
	if err != nil {
		return nil, err
	}
	byImage := map[string]Counts{}
	for i, ref := range refs {
		ir := ImageResult{Image: ref, Vulnerabilities: results[i]}
		if ir.Vulnerabilities == nil {
			ir.Vulnerabilities = []Vulnerability{}
		}
		sortVulnerabilities(ir.Vulnerabilities)
		for _, v := range ir.Vulnerabilities {
			ir.Counts.add(severityOf(v.Severity), 1)
		}
		byImage[ref] = ir.Counts
		r.Images = append(r.Images, ir)
	}
	for i := range r.Packages {
		p := &r.Packages[i]
		for _, ref := range p.Images {
			c := byImage[ref]
			for s := SeverityUnknown; s <= SeverityCritical; s++ {
				p.Counts.add(s, c.Of(s))
			}
		}
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the scanner's database version: %w", err)
	}
	r.Scanner = info
	return r, nil
}

// scanAll scans refs with up to jobs scans at once; results[i] belongs to
// refs[i].
func scanAll(ctx context.Context, refs []string, s VulnScanner, jobs int) ([][]Vulnerability, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([][]Vulnerability, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, ref := range refs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			v, err := s.ScanImage(ctx, ref)
			if err != nil {
				errs[i] = err
				cancel()
				return
			}
			results[i] = v
		}()
	}
	wg.Wait()
	// Report the first real failure, not the cancellations it caused.
	var canceled error
	for i, err := range errs {
		if err == nil {
			continue
		}
		if errors.Is(err, context.Canceled) {
			if canceled == nil {
				canceled = fmt.Errorf("scanning %s: %w", refs[i], err)
			}
			continue
		}
		if te := (*TrivyError)(nil); errors.As(err, &te) && te.Image == refs[i] {
			return nil, err // it names the image already
		}
		return nil, fmt.Errorf("scanning %s: %w", refs[i], err)
	}
	if canceled != nil {
		return nil, canceled
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	return results, nil
}

// row is one line of the table: a package version and an image it runs.
type row struct {
	name, version, label, image string
	counts                      Counts
}

func (r *Report) rows() []row {
	counts := map[string]Counts{}
	for _, i := range r.Images {
		counts[i.Image] = i.Counts
	}
	seen := map[[2]string]bool{}
	var rows []row
	for _, p := range r.Packages {
		for _, img := range p.Images {
			k := [2]string{p.Label(), img}
			if seen[k] {
				continue
			}
			seen[k] = true
			rows = append(rows, row{name: p.Name, version: p.Version, label: p.Label(), image: img, counts: counts[img]})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if c := compareVersions(a.version, b.version); c != 0 {
			return c < 0
		}
		return a.image < b.image
	})
	return rows
}

// WriteTable writes the report as a table, one row per package version
// and image it runs, sorted:
//
//	PACKAGE IMAGE CRITICAL HIGH MEDIUM LOW UNKNOWN
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tIMAGE\tCRITICAL\tHIGH\tMEDIUM\tLOW\tUNKNOWN")
	for _, x := range r.rows() {
		c := x.counts
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", x.label, x.image, c.Critical, c.High, c.Medium, c.Low, c.Unknown)
	}
	return tw.Flush()
}

// WriteText writes the table (WriteTable), then which scanner scanned and
// when its vulnerability database was updated ("unknown" when it does
// not say).
func (r *Report) WriteText(w io.Writer) error {
	if err := r.WriteTable(w); err != nil {
		return err
	}
	db := r.Scanner.DBUpdatedAt
	if db == "" {
		db = "unknown"
	}
	_, err := fmt.Fprintf(w, "\nscanned with %s %s, vulnerability DB updated %s\n", r.Scanner.Name, r.Scanner.Version, db)
	return err
}

// WriteJSON writes the report as indented JSON with a final newline.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// Unscanned returns one line per image that was not scanned and why, for
// warnings: "<pkg>@<version> runs <image>, not pinned by digest" or
// "<pkg>@<version> installs charts but declares no images".
func (r *Report) Unscanned() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range r.Packages {
		for _, img := range p.Unpinned {
			add(fmt.Sprintf("%s runs %s, not pinned by digest: not scanned; pin it as registry/repo:tag@sha256:<digest>", p.Label(), img))
		}
		if p.NoImages {
			add(fmt.Sprintf("%s installs charts but declares no images: nothing scanned; list them in package.images", p.Label()))
		}
	}
	return out
}

// Violation is a package version running an image with vulnerabilities at
// or above a threshold.
type Violation struct {
	Package  string // name@version
	Image    string
	Severity Severity
	Count    int
}

// String returns "<pkg> runs <image> with <N> <SEVERITY> vulnerabilities".
func (v Violation) String() string {
	noun := "vulnerabilities"
	if v.Count == 1 {
		noun = "vulnerability"
	}
	return fmt.Sprintf("%s runs %s with %d %s %s", v.Package, v.Image, v.Count, v.Severity, noun)
}

// Violations returns, for each package version and image, one Violation
// per severity at or above threshold with vulnerabilities, highest
// severity first, in table order.
func (r *Report) Violations(threshold Severity) []Violation {
	var out []Violation
	for _, x := range r.rows() {
		for s := SeverityCritical; s >= threshold; s-- {
			if n := x.counts.Of(s); n > 0 {
				out = append(out, Violation{Package: x.label, Image: x.image, Severity: s, Count: n})
			}
		}
	}
	return out
}
