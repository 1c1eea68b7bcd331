package trust

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"kbuild.dev/kbuild/index"
	"strconv"
)

// MaxEnvelopeSize caps a DSSE envelope that OpenEnvelope reads.
const MaxEnvelopeSize = 4 << 20

// Envelope is a DSSE envelope (https://github.com/secure-systems-lab/dsse):
// a payload, its type, and signatures of their pre-authentication
// encoding. Build provenance and test evidence are signed in it.
type Envelope struct {
	PayloadType string              `json:"payloadType"`
	Payload     string              `json:"payload"`
	Signatures  []EnvelopeSignature `json:"signatures"`
}

// EnvelopeSignature is one signature of an envelope; KeyID is the hex
// sha256 of the signer's PKIX public key, as for index signatures.
type EnvelopeSignature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// PAE is DSSE's pre-authentication encoding of a payload: what is signed.
func PAE(payloadType string, payload []byte) []byte {
	b := make([]byte, 0, len(payloadType)+len(payload)+32)
	b = append(b, "DSSEv1 "...)
	b = strconv.AppendInt(b, int64(len(payloadType)), 10)
	b = append(b, ' ')
	b = append(b, payloadType...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(payload)), 10)
	b = append(b, ' ')
	return append(b, payload...)
}

// SignEnvelope signs payload of payloadType with every signer and returns
// the envelope as indented JSON.
func SignEnvelope(payloadType string, payload []byte, signers ...Signer) ([]byte, error) {
	sigs, err := Sign(PAE(payloadType, payload), signers...)
	if err != nil {
		return nil, err
	}
	env := Envelope{PayloadType: payloadType, Payload: base64.StdEncoding.EncodeToString(payload)}
	for _, s := range sigs {
		env.Signatures = append(env.Signatures, EnvelopeSignature(s))
	}
	return json.MarshalIndent(env, "", "  ")
}

// ErrEnvelope is wrapped by OpenEnvelope's errors.
var ErrEnvelope = errors.New("not a DSSE envelope")

// OpenEnvelope decodes data strictly as a DSSE envelope of payloadType and
// returns its payload and the keyids among keys whose signature of it is
// valid (sorted, each once). It does not decide how many are enough.
func OpenEnvelope(data []byte, payloadType string, keys []Verifier) (payload []byte, signedBy []string, err error) {
	if len(data) > MaxEnvelopeSize {
		return nil, nil, fmt.Errorf("%w: %d bytes, more than the %d allowed", ErrEnvelope, len(data), MaxEnvelopeSize)
	}
	var env Envelope
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: data after the JSON object", ErrEnvelope)
	}
	if env.PayloadType != payloadType {
		return nil, nil, fmt.Errorf("%w: payloadType is %q, want %q", ErrEnvelope, env.PayloadType, payloadType)
	}
	payload, err = base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: payload is not base64: %v", ErrEnvelope, err)
	}
	sigs := make([]index.Signature, 0, len(env.Signatures))
	for _, s := range env.Signatures {
		sigs = append(sigs, index.Signature(s))
	}
	return payload, checkSignatures(PAE(payloadType, payload), sigs, keys), nil
}
