package sigstoretest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	"github.com/go-openapi/runtime"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/rekor/pkg/types"
	rekorutil "github.com/sigstore/rekor/pkg/util"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"

	// The entry kinds sigstore-go's Rekor client proposes.
	_ "github.com/sigstore/rekor/pkg/types/dsse/v0.0.1"
	_ "github.com/sigstore/rekor/pkg/types/hashedrekord/v0.0.1"
)

// treeID is the log's tree ID, part of its checkpoints' origin.
const treeID = 1

// merkleLog is the log: an RFC 6962 Merkle tree of canonicalized entries.
type merkleLog struct {
	tree *testonly.Tree
}

func newMerkleLog() *merkleLog { return &merkleLog{tree: testonly.New(rfc6962.DefaultHasher)} }

// createEntry is Rekor's POST /api/v1/log/entries: the proposed entry
// validated and canonicalized by Rekor's own entry types (the signature
// checked against the certificate or key it names), appended to the
// tree, and answered with the entry, its signed entry timestamp and its
// inclusion proof under a checkpoint signed by the log key.
func (s *Sigstore) createEntry(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/log/entries" {
		httpError(w, http.StatusNotFound, "no such endpoint %s %s", r.Method, r.URL.Path)
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	pe, err := models.UnmarshalProposedEntry(bytes.NewReader(data), runtime.JSONConsumer())
	if err != nil {
		httpError(w, http.StatusBadRequest, "proposed entry: %v", err)
		return
	}
	entry, err := types.UnmarshalEntry(pe)
	if err != nil {
		httpError(w, http.StatusBadRequest, "proposed entry: %v", err)
		return
	}
	if _, err := entry.Verifiers(); err != nil {
		httpError(w, http.StatusBadRequest, "proposed entry: %v", err)
		return
	}
	body, err := entry.Canonicalize(ctx(r))
	if err != nil {
		httpError(w, http.StatusBadRequest, "proposed entry: %v", err)
		return
	}

	s.mu.Lock()
	idx := s.log.tree.Size()
	s.log.tree.AppendData(body)
	size := s.log.tree.Size()
	rootHash := s.log.tree.Hash()
	proof, err := s.log.tree.InclusionProof(idx, size)
	s.Entries++
	s.mu.Unlock()
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}

	logID := hex.EncodeToString(s.logID())
	integrated := time.Now().Unix()
	b64 := base64.StdEncoding.EncodeToString(body)
	payload, err := json.Marshal(tlog.RekorPayload{Body: b64, IntegratedTime: integrated, LogIndex: int64(idx), LogID: logID})
	if err == nil {
		payload, err = jsoncanonicalizer.Transform(payload)
	}
	var set []byte
	if err == nil {
		set, err = s.logSigner.SignMessage(bytes.NewReader(payload))
	}
	var checkpoint []byte
	if err == nil {
		u, _ := url.Parse(s.RekorURL)
		checkpoint, err = rekorutil.CreateAndSignCheckpoint(ctx(r), u.Host, treeID, size, rootHash, s.logSigner)
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	hashes := make([]string, len(proof))
	for i, h := range proof {
		hashes[i] = hex.EncodeToString(h)
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	uuid := hex.EncodeToString(leaf)
	w.Header().Set("ETag", uuid)
	w.Header().Set("Location", "/api/v1/log/entries/"+uuid)
	writeJSON(w, http.StatusCreated, map[string]any{uuid: map[string]any{
		"body":           b64,
		"integratedTime": integrated,
		"logID":          logID,
		"logIndex":       idx,
		"verification": map[string]any{
			"signedEntryTimestamp": base64.StdEncoding.EncodeToString(set),
			"inclusionProof": map[string]any{
				"checkpoint": string(checkpoint),
				"hashes":     hashes,
				"logIndex":   idx,
				"rootHash":   hex.EncodeToString(rootHash),
				"treeSize":   size,
			},
		},
	}})
}
