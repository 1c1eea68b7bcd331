package index

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// MaxSignaturesSize caps a signature file or sidecar.
const MaxSignaturesSize = 1 << 20

// Signature is one detached ed25519 signature: the signing key's keyid and
// the standard base64 of the 64-byte signature. In the one-key form of
// index.yaml.sig the keyid is unknown and KeyID is empty.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// signaturesFile is the several-keys form of a signature file, also used
// for a build record's sidecar of delegated signatures.
type signaturesFile struct {
	Signatures []Signature `json:"signatures"`
}

// MarshalSignatures returns the signature file for sigs: for one signature
// its base64 and a newline, for several the YAML
// "signatures: [{keyid, sig}]".
func MarshalSignatures(sigs []Signature) ([]byte, error) {
	switch len(sigs) {
	case 0:
		return nil, errors.New("no signatures to write")
	case 1:
		return []byte(sigs[0].Sig + "\n"), nil
	}
	return MarshalSignatureList(sigs)
}

// MarshalSignatureList returns sigs in the YAML form
// "signatures: [{keyid, sig}]", whatever their number (the form of a
// record's sidecar of delegated signatures).
func MarshalSignatureList(sigs []Signature) ([]byte, error) {
	w := newYWriter(nil)
	w.Key(0, "signatures")
	if len(sigs) == 0 {
		w.Empty("[]")
	}
	writeSignatures(w, 0, sigs)
	if w.Slow {
		return nil, errors.New("signature keyids and values must be printable ASCII")
	}
	return w.B, nil
}

// ParseSignatures parses a signature file in either form and checks that
// each signature is base64 of 64 bytes and each keyid is 64 hex digits.
func ParseSignatures(b []byte) ([]Signature, error) {
	if len(b) > MaxSignaturesSize {
		return nil, fmt.Errorf("signature file is %d bytes, more than the %d allowed", len(b), MaxSignaturesSize)
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && !bytes.ContainsAny(t, ":\n") {
		if err := checkSig(string(t)); err != nil {
			return nil, err
		}
		return []Signature{{Sig: string(t)}}, nil
	}
	var f signaturesFile
	if err := decodeYAML(b, "signatures", &f, func(r *yreader) error {
		return r.ReadRoot(func(k string) error {
			if k != "signatures" {
				return r.unknown("signature file", k)
			}
			var err error
			f.Signatures, err = readSignatures(r)
			return err
		})
	}); err != nil {
		return nil, err
	}
	if len(f.Signatures) == 0 {
		return nil, errors.New("signature file lists no signatures")
	}
	for i, s := range f.Signatures {
		if err := CheckSignature(s); err != nil {
			return nil, fmt.Errorf("signature %d: %w", i+1, err)
		}
	}
	return f.Signatures, nil
}

func readSignatures(r *yreader) ([]Signature, error) {
	var out []Signature
	present, err := r.ReadSeq(func() error {
		out = append(out, Signature{})
		s := &out[len(out)-1]
		_, err := r.ReadMap(func(k string) error {
			var err error
			switch k {
			case "keyid":
				s.KeyID, err = r.ReadString("keyid")
			case "sig":
				s.Sig, err = r.ReadString("sig")
			default:
				err = r.unknown("signature", k)
			}
			return err
		})
		return err
	})
	if present && out == nil {
		out = []Signature{}
	}
	return out, err
}

// CheckSignature checks the form of a signature with a keyid.
func CheckSignature(s Signature) error {
	if err := checkKeyID(s.KeyID); err != nil {
		return err
	}
	return checkSig(s.Sig)
}

func checkKeyID(id string) error {
	if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return fmt.Errorf("keyid %q is not 64 lowercase hex digits (the sha256 of the PKIX public key)", id)
	}
	return nil
}

func checkSig(s string) error {
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return fmt.Errorf("signature is not the standard base64 of a %d-byte ed25519 signature", ed25519.SignatureSize)
	}
	return nil
}

// AddSignature returns sigs with s added, replacing an earlier signature by
// the same key, sorted by keyid.
func AddSignature(sigs []Signature, s Signature) []Signature {
	out := make([]Signature, 0, len(sigs)+1)
	for _, o := range sigs {
		if o.KeyID != s.KeyID {
			out = append(out, o)
		}
	}
	out = append(out, s)
	sort.Slice(out, func(i, j int) bool { return out[i].KeyID < out[j].KeyID })
	return out
}
