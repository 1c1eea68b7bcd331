package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/trust"
)

// TestVerifyOrder checks the order of repo verify's action: a refused
// index stops everything; a chart that does not match its pin stops the
// run before the state is written and the evidence read; otherwise the
// state is recorded and the evidence verified against the root's qa role.
func TestVerifyOrder(t *testing.T) {
	r := newRepo(t, "foreman-3.15.0-1")
	r.attest(r.x, foreman, evidence.Pass, "kubernetes=1.33,arch=amd64", gen.AddDate(0, 3, 0), r.qa)
	pinned := &trust.Trust{RootKeys: []*trust.PublicKey{r.rootKey.Public()}}
	verify := func(tr *trust.Trust, charts bool) (*VerifyResult, string, error) {
		state := filepath.Join(t.TempDir(), "state.json")
		res, err := (&Verify{Ref: filepath.Join(r.site, "unstable"), Trust: tr, StateFile: state, Charts: charts,
			Evidence: filepath.Join(r.site, "evidence"), Timeout: time.Second, Now: gen.Add(2 * time.Hour)}).Run(context.Background())
		return res, state, err
	}
	written := func(state string) bool {
		_, err := os.Stat(state)
		return err == nil
	}

	res, state, err := verify(&trust.Trust{RootKeys: []*trust.PublicKey{r.stranger.Public()}}, false)
	var ve *trust.VerificationError
	if !errors.As(err, &ve) || res == nil || res.Verified != nil || written(state) {
		t.Errorf("an index under another root: Run = %+v, %v (state written %v); want a VerificationError, nothing verified, no state", res, err, written(state))
	}

	res, state, err = verify(pinned, true) // the charts' registry is not there
	if err != nil || res.Charts == 0 || len(res.Mismatches) != res.Charts || written(state) || res.Evidence != nil {
		t.Errorf("charts that cannot be pulled: Run = %+v, %v (state written %v); want every chart a mismatch, no state, no evidence read", res, err, written(state))
	}

	res, state, err = verify(pinned, false)
	if err != nil || res.Verified == nil || !written(state) || len(res.Evidence) != 1 || len(res.Refused) != 0 {
		t.Errorf("a good index: Run = %+v, %v (state written %v); want it verified, the state written, one piece of evidence", res, err, written(state))
	}
}
