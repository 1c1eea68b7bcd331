package suite

import (
	"context"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/chartpin"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// Verify is the action of kbuild repo verify: a published index checked
// as a subscriber checks it, then, in this order, the charts it pins, the
// state recorded for the next run, and the test evidence of the versions
// it holds. The state is written only when the index and every chart
// passed, and evidence is checked only after that.
type Verify struct {
	// Ref is the index: a site directory, an index.yaml or an http(s)
	// URL of either.
	Ref string
	// Trust is what verifies it (required).
	Trust *trust.Trust
	// StateFile, when set, records the last accepted index and root: an
	// older one, or another root of the same version, is refused.
	StateFile string
	// Charts pulls every pinned chart and compares its archive digest
	// with the pin; PlainHTTP allows loopback registries.
	Charts, PlainHTTP bool
	// Evidence is a directory of test evidence (a site's evidence/) to
	// verify against the root's qa role; "" for none.
	Evidence string
	// Timeout is the idle timeout of the site and the registries.
	Timeout time.Duration
	// Now is the time expiries are checked against (default: the clock;
	// Run sets it).
	Now time.Time
}

// VerifyResult is what Verify checked, as far as it got.
type VerifyResult struct {
	// IndexName names the index verified (its URL or path).
	IndexName string
	// Verified is the index's verification; nil when it was refused.
	Verified *trust.Verified
	// Charts is how many charts were checked, Mismatches those that do
	// not match their pins (then the state is not written and evidence
	// not checked).
	Charts     int
	Mismatches []*chartpin.Mismatch
	// Evidence is the evidence accepted, Refused each refused file with
	// why, and Skipped how many files are about versions the index does
	// not hold.
	Evidence []*evidence.Verified
	Refused  []string
	Skipped  int
}

// Run verifies the index and what the options add, in order; the result
// holds what was done when a later step fails.
func (v *Verify) Run(ctx context.Context) (*VerifyResult, error) {
	if v.Now.IsZero() {
		v.Now = time.Now()
	}
	var state *trust.State
	if v.StateFile != "" {
		var err error
		if state, err = siteread.ReadState(v.StateFile); err != nil {
			return nil, err
		}
	}
	site, err := siteread.Open(v.Ref, siteread.WithTimeout(v.Timeout))
	if err != nil {
		return nil, err
	}
	res := &VerifyResult{IndexName: site.IndexName()}
	// Without charts or evidence nothing needs the parsed index: each
	// package is checked as it is read and dropped.
	verified, err := site.Verify(ctx, v.Trust, trust.VerifyOptions{Now: v.Now, State: state, DiscardIndex: !v.Charts && v.Evidence == ""})
	if err != nil {
		return res, err
	}
	res.Verified = verified
	if v.Charts {
		res.Charts, res.Mismatches = chartpin.Check(ctx, res.Verified.Index, chartpin.Options{PlainHTTP: v.PlainHTTP, Timeout: v.Timeout})
		if len(res.Mismatches) > 0 {
			return res, nil
		}
	}
	if v.StateFile != "" {
		if err := siteread.WriteState(v.StateFile, &res.Verified.State); err != nil {
			return res, err
		}
	}
	if v.Evidence != "" {
		res.Evidence, res.Refused, res.Skipped, err = VerifyEvidence(v.Evidence, res.Verified.Root, res.Verified.Index, v.Now)
	}
	return res, err
}
