package trust

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"

	"filippo.io/edwards25519"

	"kbuild.dev/kbuild/index"
)

// Message is a message to sign that is not held in memory as one slice:
// each call writes the whole message to w, the same bytes every time (an
// index written from its parts). SignMessage calls it twice, one call
// after the other.
type Message func(w io.Writer) error

// ErrMessageChanged is returned by SignMessage when the two readings of a
// message differ: nothing was signed.
var ErrMessageChanged = errors.New("the message changed between the two passes of signing it; nothing was signed")

// SignMessage signs the message m writes with every signer, in order, as
// Sign signs bytes, and returns its SHA-256 as well. The signatures are
// exactly those of Sign: an ed25519 *PrivateKey signs as RFC 8032 does, in
// two passes over the message (the nonce is a hash of the message, the
// challenge a hash of the nonce's point and the message), and every such
// key is fed by the same two passes, without the message ever being in
// memory. Any other Signer gets the message in memory.
//
// Each pass also takes the SHA-256 of the very bytes it gave the keys, in
// a second goroutine (so that two cores hash at once); when the two passes
// differ, m is not deterministic and SignMessage returns ErrMessageChanged
// without computing any signature: one nonce with two challenges would
// give the key away.
func SignMessage(m Message, signers ...Signer) ([]index.Signature, [32]byte, error) {
	var sum [32]byte
	if len(signers) == 0 {
		return nil, sum, errors.New("no signing key given")
	}
	// streams[i] signs for signers[i] when it is an ed25519 key; the rest
	// get the message whole.
	streams := make([]*ed25519Stream, len(signers))
	var nonces, challenges []io.Writer
	var data *bytes.Buffer
	for i, s := range signers {
		if k, ok := s.(*PrivateKey); ok {
			streams[i] = newEd25519Stream(k)
			nonces, challenges = append(nonces, streams[i].nonce), append(challenges, streams[i].challenge)
		} else if data == nil {
			data = new(bytes.Buffer)
			nonces = append(nonces, data)
		}
	}
	// First pass: each key's nonce (and the message itself for the
	// signers that need it whole), and the SHA-256.
	if err := pass(m, sum[:0], nonces); err != nil {
		return nil, sum, err
	}
	if len(challenges) > 0 {
		// Second pass: each key's challenge over R || A || M, and the
		// SHA-256 again.
		for _, st := range streams {
			if st != nil {
				st.commit()
			}
		}
		var again [32]byte
		if err := pass(m, again[:0], challenges); err != nil {
			return nil, sum, err
		}
		if subtle.ConstantTimeCompare(again[:], sum[:]) != 1 {
			return nil, sum, ErrMessageChanged
		}
	}
	out := make([]index.Signature, 0, len(signers))
	for i, s := range signers {
		var sig []byte
		if streams[i] != nil {
			sig = streams[i].signature()
		} else {
			var err error
			if sig, err = s.Sign(data.Bytes()); err != nil {
				return nil, sum, fmt.Errorf("sign with key %s: %w", s.KeyID(), err)
			}
		}
		out = append(out, index.Signature{KeyID: s.KeyID(), Sig: base64.StdEncoding.EncodeToString(sig)})
	}
	return out, sum, nil
}

// pass writes the message once to every one of ws and, copied, to a
// SHA-256 in another goroutine, whose sum it appends to sum.
func pass(m Message, sum []byte, ws []io.Writer) error {
	h := newAsyncHash(sha256.New())
	err := m(io.MultiWriter(append(ws[:len(ws):len(ws)], h)...))
	h.sum(sum)
	return err
}

// asyncHash is a hash fed in another goroutine: Write copies into chunks
// that the goroutine hashes while the writer goes on.
type asyncHash struct {
	h          hash.Hash
	buf        []byte
	full, free chan []byte
	done       chan struct{}
}

// asyncChunk is the size of the chunks an asyncHash hashes: a few fit in
// a core's cache.
const asyncChunk = 256 << 10

func newAsyncHash(h hash.Hash) *asyncHash {
	a := &asyncHash{h: h, full: make(chan []byte, 2), free: make(chan []byte, 3), done: make(chan struct{})}
	for range 2 {
		a.free <- make([]byte, 0, asyncChunk)
	}
	a.buf = make([]byte, 0, asyncChunk)
	go func() {
		defer close(a.done)
		for b := range a.full {
			a.h.Write(b)
			a.free <- b[:0]
		}
	}()
	return a
}

// Write copies p into chunks for the hashing goroutine. It never fails.
func (a *asyncHash) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := copy(a.buf[len(a.buf):cap(a.buf)], p)
		a.buf, p = a.buf[:len(a.buf)+k], p[k:]
		if len(a.buf) == cap(a.buf) {
			a.full <- a.buf
			a.buf = <-a.free
		}
	}
	return n, nil
}

// sum hashes what is left, stops the goroutine and appends the sum to b.
func (a *asyncHash) sum(b []byte) []byte {
	if len(a.buf) > 0 {
		a.full <- a.buf
	}
	close(a.full)
	<-a.done
	return a.h.Sum(b)
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
