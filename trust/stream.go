package trust

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"

	"filippo.io/edwards25519"

	"kbuild.dev/kbuild/index"
)

// SignParts signs the message made of parts, one after the other, with
// every signer, in order, as Sign signs the same bytes joined, and returns
// the message's SHA-256 as well. The signatures are exactly those of Sign:
// an ed25519 *PrivateKey signs as RFC 8032 does, in two passes over the
// parts (the nonce is a hash of the message, the challenge a hash of the
// nonce's point and the message), every such key fed by the same passes,
// the SHA-256 taken in another goroutine beside the first; the parts are
// never joined. Any other Signer gets the message joined in memory.
//
// The parts must not change during the call, as Sign's message must not:
// a message that changed between the two passes would sign two challenges
// with one nonce, which gives the key away.
func SignParts(parts [][]byte, signers ...Signer) ([]index.Signature, [32]byte, error) {
	var sum [32]byte
	if len(signers) == 0 {
		return nil, sum, errors.New("no signing key given")
	}
	// streams[i] signs for signers[i] when it is an ed25519 key.
	streams := make([]*ed25519Stream, len(signers))
	var nonces, challenges []hash.Hash
	joined := false
	for i, s := range signers {
		if k, ok := s.(*PrivateKey); ok {
			streams[i] = newEd25519Stream(k)
			nonces, challenges = append(nonces, streams[i].nonce), append(challenges, streams[i].challenge)
		} else {
			joined = true
		}
	}
	// First pass: the SHA-256 in another goroutine, each key's nonce here.
	digested := make(chan struct{})
	go func() {
		defer close(digested)
		h := sha256.New()
		feed(parts, h)
		h.Sum(sum[:0])
	}()
	feed(parts, nonces...)
	<-digested
	// Second pass: each key's challenge over R || A || M.
	for _, st := range streams {
		if st != nil {
			st.commit()
		}
	}
	feed(parts, challenges...)
	var data []byte
	if joined {
		data = bytes.Join(parts, nil)
	}
	out := make([]index.Signature, 0, len(signers))
	for i, s := range signers {
		var sig []byte
		if streams[i] != nil {
			sig = streams[i].signature()
		} else {
			var err error
			if sig, err = s.Sign(data); err != nil {
				return nil, sum, fmt.Errorf("sign with key %s: %w", s.KeyID(), err)
			}
		}
		out = append(out, index.Signature{KeyID: s.KeyID(), Sig: base64.StdEncoding.EncodeToString(sig)})
	}
	return out, sum, nil
}

// feed writes every part to every one of hs, part by part.
func feed(parts [][]byte, hs ...hash.Hash) {
	if len(hs) == 0 {
		return
	}
	for _, p := range parts {
		for _, h := range hs {
			h.Write(p)
		}
	}
}

// ed25519Stream is one RFC 8032 Ed25519 signature (section 5.1.6) of a
// message read twice: nonce hashes prefix || M, then commit fixes
// R = r·B, and challenge hashes R || A || M.
type ed25519Stream struct {
	key       *PrivateKey
	s         edwards25519.Scalar // the secret scalar
	r         edwards25519.Scalar // the nonce
	rBytes    []byte              // R, encoded
	nonce     hash.Hash           // SHA-512(prefix || M)
	challenge hash.Hash           // SHA-512(R || A || M)
}

func newEd25519Stream(k *PrivateKey) *ed25519Stream {
	h := sha512.Sum512(k.key.Seed())
	st := &ed25519Stream{key: k, nonce: sha512.New(), challenge: sha512.New()}
	if _, err := st.s.SetBytesWithClamping(h[:32]); err != nil {
		panic(err) // 32 bytes always clamp
	}
	st.nonce.Write(h[32:])
	return st
}

// commit ends the first pass: r = SHA-512(prefix || M) mod l, R = r·B,
// and starts the challenge with R || A.
func (st *ed25519Stream) commit() {
	var digest [sha512.Size]byte
	if _, err := st.r.SetUniformBytes(st.nonce.Sum(digest[:0])); err != nil {
		panic(err) // 64 bytes are always uniform bytes
	}
	st.rBytes = new(edwards25519.Point).ScalarBaseMult(&st.r).Bytes()
	st.challenge.Write(st.rBytes)
	st.challenge.Write(st.key.pub.key)
}

// signature ends the second pass: k = SHA-512(R || A || M) mod l,
// S = k·s + r, and the signature is R || S.
func (st *ed25519Stream) signature() []byte {
	var digest [sha512.Size]byte
	var k, sc edwards25519.Scalar
	if _, err := k.SetUniformBytes(st.challenge.Sum(digest[:0])); err != nil {
		panic(err)
	}
	sc.MultiplyAdd(&k, &st.s, &st.r)
	return append(append(make([]byte, 0, 64), st.rBytes...), sc.Bytes()...)
}
