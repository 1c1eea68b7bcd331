package suite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// EvidenceDir is the directory of a recipes repository that holds the
// signed test evidence QA commits by pull request (written by 'kbuild
// attest -o'), beside suites.yaml; publish verifies it and copies it into
// the site.
const EvidenceDir = sitelayout.EvidenceDir

// MaxIncoming caps the evidence files a publish takes from a repository.
const MaxIncoming = 10000

// Incoming is one evidence file of a repository on its way into a site.
type Incoming struct {
	// Src is the file in the repository.
	Src string
	// Dest is where it goes in the site: evidence/<name>-<version>-
	// <build>/<environment>.intoto.json, named by what it verified to be
	// (its target and environment), the path promote reads.
	Dest string
	// Digest is "sha256:<hex>" of the envelope.
	Digest   string
	Envelope []byte
	Verified *evidence.Verified
}

// ScanIncoming lists the evidence files (*.intoto.json) under dir, a
// repository's evidence directory, that the site does not hold byte for
// byte already; a dir that does not exist holds none. Each new file is
// read (at most trust.MaxEnvelopeSize) but not verified: VerifyIncoming
// does. Files already in the site are not checked again, so evidence that
// has since expired does not stop a publish. Anything but regular files
// (a symbolic link, say) is refused.
func ScanIncoming(dir, site string) ([]*Incoming, error) {
	if !exists(dir) {
		return nil, nil
	}
	have, err := publishedDigests(site)
	if err != nil {
		return nil, err
	}
	var out []*Incoming
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".intoto.json") {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("evidence %s: not a regular file; commit the envelope itself", p)
		}
		if n++; n > MaxIncoming {
			return fmt.Errorf("evidence %s: more than %d files; remove the evidence of versions no longer promoted", dir, MaxIncoming)
		}
		data, err := siteread.ReadFile(p, trust.MaxEnvelopeSize)
		if err != nil {
			return fmt.Errorf("evidence %w", err)
		}
		sum := sha256.Sum256(data)
		in := &Incoming{Src: p, Envelope: bytes.Clone(data), Digest: "sha256:" + hex.EncodeToString(sum[:])}
		siteread.Release(data)
		if !have[in.Digest] {
			out = append(out, in)
		}
		return nil
	})
	return out, err
}

// publishedDigests returns the sha256 of every evidence file the site
// holds: they were verified when they were copied there.
func publishedDigests(site string) (map[string]bool, error) {
	have := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(site, sitelayout.EvidenceDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ".intoto.json") {
			return err
		}
		data, err := siteread.ReadFile(p, trust.MaxEnvelopeSize)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		siteread.Release(data)
		have["sha256:"+hex.EncodeToString(sum[:])] = true
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) && !exists(filepath.Join(site, sitelayout.EvidenceDir)) {
		err = nil
	}
	return have, err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// VerifyIncoming verifies each incoming file as promote does — signed by
// a threshold of root's qa role, a test-result statement, not expired at
// now, its subjects exactly the digests x (the published index) pins for
// its target — and names its place in the site. The first that does not
// verify, or two that are evidence of one version in one environment, is
// an error naming the file: a publish then writes nothing.
func VerifyIncoming(in []*Incoming, root *trust.Root, x *index.RepositoryIndex, now time.Time) error {
	dests := map[string]string{}
	for _, e := range in {
		v, err := evidence.Verify(e.Envelope, root, x, now)
		switch {
		case errors.Is(err, evidence.ErrNotInIndex):
			return fmt.Errorf("evidence %s: %w; evidence is of a published version: publish it first, or remove the file", e.Src, err)
		case err != nil:
			return fmt.Errorf("evidence %s: %w; nothing was published: fix or remove the file (by pull request)", e.Src, err)
		}
		e.Verified = v
		e.Dest = sitelayout.EvidenceFile(v.Target.Package, v.Target.Version, v.Target.Build, evidence.EnvString(v.Env))
		if other, ok := dests[e.Dest]; ok {
			return fmt.Errorf("evidence %s and %s are both of %s on %s; keep one (the newer result) and remove the other", other, e.Src, v.Target, evidence.EnvString(v.Env))
		}
		dests[e.Dest] = e.Src
	}
	return nil
}

// InstallIncoming attaches each verified incoming file to the charts of
// its version (for a release set, of every member) in the registry as an
// OCI referrer (publish.AttachEvidence; pub is the published index the
// evidence was verified against, whose build info names the chart
// manifests), then writes it to its place in the site through a temporary
// file and a rename, replacing the evidence of the same version and
// environment there. It returns the references attached to.
func InstallIncoming(ctx context.Context, in []*Incoming, site string, pub *siteread.Published, created time.Time, plainHTTP bool, timeout time.Duration) ([]string, error) {
	var refs []string
	for _, e := range in {
		if e.Verified == nil {
			return refs, fmt.Errorf("evidence %s: not verified", e.Src)
		}
		versions, err := Versions(pub.Verified.Index, e.Verified.Target)
		if err != nil {
			return refs, fmt.Errorf("evidence %s: %w", e.Src, err)
		}
		r, err := publish.AttachEvidence(ctx, pub, versions, e.Envelope, created, plainHTTP, timeout)
		if err != nil {
			return refs, fmt.Errorf("evidence %s: %w; its file was not copied into the site, so the next publish tries again", e.Src, err)
		}
		refs = append(refs, r...)
		if err := atomicfile.WriteFile(filepath.Join(site, filepath.FromSlash(e.Dest)), e.Envelope, 0o644); err != nil {
			return refs, err
		}
	}
	return refs, nil
}
