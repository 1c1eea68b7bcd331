package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/trust"
)

// RepoIndex is the action of kbuild repo index: index.yaml, signed or
// not, from the build records of a dist directory, merged over a
// verified published index.
type RepoIndex struct {
	// Dist holds the build records; Out is the index file to write ("-"
	// for the standard output, unsigned only).
	Dist, Out string
	// Signers sign the index (none: unsigned).
	Signers []trust.Signer
	// Merge is the published index to merge over ("" for none), verified
	// with MergeTrust; AllowNew lets a missing one start a new index;
	// Relocate moves its charts from one registry path to another.
	Merge      string
	MergeTrust *trust.Trust
	AllowNew   bool
	Relocate   map[string]string
	// Generated is the index's generated time; Expires how long after it
	// the index expires (0: never).
	Generated time.Time
	Expires   time.Duration
	// VerifyCharts pulls every chart the records pin and checks its
	// archive digest before anything is written.
	VerifyCharts bool
	// Fetcher pins the charts that records name without a digest (nil:
	// such a record is refused); Warnf gets its warnings.
	Fetcher *sources.Fetcher
	Warnf   func(format string, args ...any)
	// PlainHTTP allows plain HTTP to loopback registries; Timeout bounds
	// each HTTP request for the base.
	PlainHTTP bool
	Timeout   time.Duration
	// Now is the time the expiry is checked against (default: the clock).
	Now time.Time
	// Stdout and Stderr get the publisher's results and progress
	// (default: discarded).
	Stdout, Stderr io.Writer
}

// RepoIndexResult is what RepoIndex checked and wrote.
type RepoIndexResult struct {
	// Checked is how many charts VerifyCharts pulled, Refused those that
	// do not match their pins.
	Checked int
	Refused []*chartpin.Mismatch
	// Index is what was written.
	Index *Result
}

// ErrChartsMismatch is wrapped by the error of a RepoIndex whose
// VerifyCharts found charts that do not match their pins.
var ErrChartsMismatch = errors.New("charts do not match their pins")

// PastExpiryError is the error of a RepoIndex whose index would expire
// before Now: Generated plus Expires is past.
type PastExpiryError struct {
	Expires, Generated time.Time
	After              time.Duration
}

func (e *PastExpiryError) Error() string {
	return fmt.Sprintf("the index would expire at %s, which is past (generated %s + %s)",
		e.Expires.Format(time.RFC3339), e.Generated.Format(time.RFC3339), e.After)
}

// Run writes the index, in this order: with VerifyCharts the charts are
// checked first (one that does not match stops it); an expiry already
// past is refused; then the base is read and verified, the records added,
// and the index signed and written (Publisher.Index).
func (a *RepoIndex) Run(ctx context.Context) (*RepoIndexResult, error) {
	res := &RepoIndexResult{}
	stderr := a.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	if a.VerifyCharts {
		n, bad, err := CheckRecordCharts(ctx, a.Dist, chartpin.Options{PlainHTTP: a.PlainHTTP})
		if err != nil {
			return nil, err
		}
		res.Checked, res.Refused = n, bad
		if len(bad) > 0 {
			return res, fmt.Errorf("%d of %d %w; nothing was written", len(bad), n, ErrChartsMismatch)
		}
		fmt.Fprintf(stderr, "%d charts match their pinned digests\n", n)
	}
	now := a.Now
	if now.IsZero() {
		now = time.Now()
	}
	if a.Expires > 0 {
		if expires := a.Generated.Add(a.Expires); !expires.After(now) {
			return res, &PastExpiryError{Expires: expires, Generated: a.Generated, After: a.Expires}
		}
	}
	opts := []Option{WithSigners(a.Signers...), WithGenerated(a.Generated), WithTimeout(a.Timeout), WithExpires(a.Expires),
		WithOutput(a.Stdout, a.Stderr), WithRelocate(a.Relocate), WithPlainHTTP(a.PlainHTTP)}
	if a.Fetcher != nil {
		warnf := a.Warnf
		if warnf == nil {
			warnf = func(string, ...any) {}
		}
		opts = append(opts, WithChartPinner(SourcePinner(a.Fetcher, warnf)))
	}
	if a.Merge != "" {
		opts = append(opts, WithMerge(a.Merge, a.MergeTrust, a.AllowNew))
	}
	p, err := New(opts...)
	if err != nil {
		return res, err
	}
	res.Index, err = p.Index(ctx, a.Dist, a.Out)
	return res, err
}

// ParseRelocate reads relocations, each oci://OLD=oci://NEW (a trailing
// slash dropped), into RepoIndex.Relocate.
func ParseRelocate(vals []string) (map[string]string, error) {
	moves := map[string]string{}
	for _, v := range vals {
		from, to, ok := strings.Cut(v, "=")
		from, to = strings.TrimSuffix(from, "/"), strings.TrimSuffix(to, "/")
		if !ok || !strings.HasPrefix(from, "oci://") || !strings.HasPrefix(to, "oci://") || len(from) <= len("oci://") || len(to) <= len("oci://") {
			return nil, fmt.Errorf("%q: want oci://OLD=oci://NEW", v)
		}
		moves[from] = to
	}
	return moves, nil
}
