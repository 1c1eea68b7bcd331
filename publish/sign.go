package publish

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// signed is an index written to a temporary file and signed, not yet in
// place.
type signed struct {
	path    string           // where the index goes
	tmp     *atomicfile.File // the index, written
	data    []byte           // the index, read back from tmp (prepareSigned only)
	hex     string           // its sha256
	sigData []byte
}

// writeSigned writes the index of b, generated and expiring at the times
// given, to a temporary file beside path and signs it, then Resets b.
// Both cores work at once: one goroutine writes the index to the file
// straight from b's parts and has the disk sync it, while the others sign
// the same parts (trust.SignParts: two passes of every key's SHA-512, the
// first beside the SHA-256 that names the index under by-hash/). The index
// is never assembled in memory, nor read back. Call commit to put it in
// place, or discard.
func writeSigned(path string, b *index.Builder, generated, expires time.Time, signers []trust.Signer) (*signed, error) {
	if len(signers) == 0 {
		return nil, errors.New("no signing key")
	}
	r, err := b.Render(generated, expires)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, err
	}
	s := &signed{path: path, tmp: f}
	written := make(chan error, 1)
	go func() { written <- writeRendered(f, r) }()
	sigs, sum, err := trust.SignParts(r.Parts(), signers...)
	werr := <-written
	b.Reset() // nothing of it is needed any more
	if werr != nil {
		s.discard()
		return nil, fmt.Errorf("write %s: %w", path, werr)
	}
	if err != nil {
		s.discard()
		return nil, fmt.Errorf("sign %s: %w", path, err)
	}
	s.hex = hex.EncodeToString(sum[:])
	if s.sigData, err = index.MarshalSignatures(sigs); err != nil {
		s.discard()
		return nil, err
	}
	return s, nil
}

// writeRendered writes r to f, checks that all of it was written and
// makes it durable, so that the rename in commit waits for nothing.
func writeRendered(f *atomicfile.File, r *index.Rendered) error {
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := r.WriteTo(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && n != r.Size() {
		err = fmt.Errorf("wrote %d of %d bytes", n, r.Size())
	}
	if err != nil {
		return err
	}
	return f.Sync()
}

// prepareSigned is writeSigned, then reads the index back into memory
// (s.data) for callers that go on to read it, after releasing b's memory:
// the versions and the index are never in memory together. The bytes read
// must have the SHA-256 that was signed.
func prepareSigned(path string, b *index.Builder, generated, expires time.Time, signers []trust.Signer) (*signed, error) {
	s, err := writeSigned(path, b, generated, expires, signers)
	if err != nil {
		return nil, err
	}
	debug.FreeOSMemory()
	if s.data, err = siteread.ReadFile(s.tmp.Name(), index.MaxIndexSize); err != nil {
		s.discard()
		return nil, err
	}
	if got := hexDigest(s.data); got != s.hex {
		s.discard()
		return nil, fmt.Errorf("%s changed after it was written (sha256 %s, signed %s): something else writes the site; nothing was put in place, run it again", s.tmp.Name(), got, s.hex)
	}
	return s, nil
}

func (s *signed) discard() {
	if s.data != nil {
		siteread.Release(s.data)
		s.data = nil
	}
	s.tmp.Abort()
}

// commit puts the signed index in place: first its signature by digest,
// by-hash/sha256/<hex>.sig beside it (kept for good: 89 bytes a publish,
// so that a reader that fetched an earlier index.yaml still finds its
// signature), then index.yaml.sig and last index.yaml, each through a
// rename. The index itself is not copied under by-hash/: a Pages artifact
// may not hold hard links, and a copy would double the site. With expect set, the index
// at path must still have that digest ("" for none) when it is replaced:
// a publish that raced another fails instead of overwriting what the other
// signed. expect is a fileID.
func (s *signed) commit(expect *string) error {
	defer s.discard()
	dir := filepath.Dir(s.path)
	if err := atomicfile.WriteFile(filepath.Join(dir, filepath.FromSlash(sitelayout.ByHashSignatureOf(s.hex))), s.sigData, 0o644); err != nil {
		return err
	}
	pauseAt("by-hash")
	if expect != nil {
		now, err := fileID(s.path)
		if err != nil {
			return err
		}
		if now != *expect {
			was := *expect
			if was == "" {
				was = "none"
			}
			if now == "" {
				now = "none"
			}
			return fmt.Errorf("%s changed while this publish ran (it was %s, it is %s): another publish wrote the site; nothing of this one was signed into place, run it again", s.path, was, now)
		}
	}
	return switchIndex(s.path, s.sigData, s.tmp.Commit)
}

// switchIndex puts a new index at path, with its signature file sigData,
// through renameIndex, so that index.yaml.sig signs index.yaml at every
// instant, as kubepkg reads the pair (index.yaml, then index.yaml.sig):
// when an index is in place, index.yaml.sig first holds the signatures of
// the old index and of the new one (kubepkg and kbuild skip a signature
// that does not verify and count one that does), then the new index is
// renamed into place, and last index.yaml.sig holds the new signatures
// only. Without an index in place the signature goes first. A publish
// killed at any step leaves a pair that verifies; the next one puts back
// the exact signature by digest (repairPair).
func switchIndex(path string, sigData []byte, renameIndex func() error) error {
	sigPath := path + ".sig"
	if _, err := os.Stat(path); err != nil {
		if err := atomicfile.WriteFile(sigPath, sigData, 0o644); err != nil {
			return err
		}
		return renameIndex()
	}
	old, err := siteread.ReadFile(sigPath, index.MaxSignaturesSize)
	if err == nil {
		if both, ok := bothSignatures(old, sigData); ok {
			if err := atomicfile.WriteFile(sigPath, both, 0o644); err != nil {
				return err
			}
			pauseAt("both signatures")
		}
	}
	if err := renameIndex(); err != nil {
		return err
	}
	pauseAt("index")
	return atomicfile.WriteFile(sigPath, sigData, 0o644)
}

// bothSignatures returns a signature file holding the signatures of old
// and of now (both signature files), or false when old is not one.
func bothSignatures(old, now []byte) ([]byte, bool) {
	a, err := index.ParseSignatures(old)
	if err != nil {
		return nil, false
	}
	b, err := index.ParseSignatures(now)
	if err != nil {
		return nil, false
	}
	all := a
	for _, s := range b {
		if !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	out, err := index.MarshalSignatureList(all)
	return out, err == nil
}

// repairPair makes index.yaml.sig in site the signature by digest of
// site's index.yaml (by-hash/sha256/<hex>.sig, written before the index
// and never changed) when they differ: a publish killed while it switched
// the pair left both signatures in index.yaml.sig, or (before kbuild
// kept them together) the new signature beside the old index. It reports
// what it did, or "" when nothing was needed. Call it under the site's
// lock.
func repairPair(site string) (string, error) {
	path := filepath.Join(site, sitelayout.IndexFile)
	d, err := fileDigest(path)
	if err != nil || d == "" {
		return "", err
	}
	byHash := sitelayout.ByHashSignatureOf(strings.TrimPrefix(d, "sha256:"))
	want, err := siteread.ReadFile(filepath.Join(site, filepath.FromSlash(byHash)), index.MaxSignaturesSize)
	if errors.Is(err, siteread.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	have, err := siteread.ReadFile(path+".sig", index.MaxSignaturesSize)
	if err == nil && bytes.Equal(have, want) {
		return "", nil
	}
	if err := atomicfile.WriteFile(path+".sig", want, 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s did not hold exactly the signature of %s (a publish was interrupted while it replaced them): restored it from %s", sitelayout.SignatureFile, sitelayout.IndexFile, byHash), nil
}

// fileID identifies the file at path — device, inode, size and
// modification time, which a replacement through a rename changes — or is
// "" when it does not exist.
func fileID(path string) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return inode(fi) + fmt.Sprintf("size %d, modified %s", fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano)), nil
}

// fileDigest returns "sha256:<hex>" of the file at path, or "" when it
// does not exist.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// hexDigest is the hex of the sha256 of data.
func hexDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
