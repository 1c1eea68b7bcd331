package publish

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
)

// MirrorResult is what MirrorIndex copied.
type MirrorResult struct {
	// Index is the path of the copy of the index.
	Index string
	// Files are the paths copied, relative to the destination, in the
	// order they were put in place (the index last).
	Files []string
	// Generated and Expires are the index's.
	Generated, Expires time.Time
}

// rootVersion matches root/N.yaml.
var rootVersion = regexp.MustCompile(`^[1-9][0-9]*\.yaml$`)

// MirrorIndex makes the directory to serve, byte for byte, the signed
// index of the site in from — what a kubepkg subscriber fetches and
// verifies: the root of trust (root.yaml and root/N.yaml), the public keys
// under keys/, the signature by the index's digest under by-hash/, then
// index.yaml.sig and, last, index.yaml, each through a temporary file and
// a rename, so a subscriber of to reads either the previous index or this
// one, each with its own signature. It is how a repository with suites
// keeps the URL of its single index: the site root serves the first
// suite. Nothing of from's catalog, SBOMs or provenance is copied.
//
// Both directories are locked against publishes while it copies. It
// refuses, writing nothing, when to holds an index generated later than
// from's (subscribers would take the copy for a rollback) or when from's
// index.yaml.sig is not the signature of its index.yaml.
func MirrorIndex(from, to string) (*MirrorResult, error) {
	unlockFrom, err := lockSite(from)
	if err != nil {
		return nil, err
	}
	defer unlockFrom()
	unlockTo, err := lockSite(to)
	if err != nil {
		return nil, err
	}
	defer unlockTo()
	data, err := siteread.ReadFile(filepath.Join(from, sitelayout.IndexFile), index.MaxIndexSize)
	if err != nil {
		return nil, err
	}
	defer siteread.Release(data)
	sig, err := siteread.ReadFile(filepath.Join(from, sitelayout.SignatureFile), index.MaxSignaturesSize)
	if err != nil {
		return nil, err
	}
	byHash := sitelayout.ByHashSignatureFile(data)
	if h, err := siteread.ReadFile(filepath.Join(from, filepath.FromSlash(byHash)), index.MaxSignaturesSize); err != nil || !bytes.Equal(h, sig) {
		return nil, fmt.Errorf("%s: %s is not the signature of %s (%s): a publish into %s may be running; nothing was copied to %s, run it again",
			from, sitelayout.SignatureFile, sitelayout.IndexFile, byHash, from, to)
	}
	head, err := checkNotNewer(filepath.Join(to, sitelayout.IndexFile), filepath.Join(from, sitelayout.IndexFile), data)
	if err != nil {
		return nil, err
	}
	var files []string
	if err := sidecars(from, &files); err != nil {
		return nil, err
	}
	res := &MirrorResult{Index: filepath.Join(to, sitelayout.IndexFile), Generated: head.Generated, Expires: head.Expires}
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(from, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(filepath.Join(to, filepath.FromSlash(rel)), b, 0o644); err != nil {
			return nil, err
		}
		res.Files = append(res.Files, rel)
	}
	if err := atomicfile.WriteFile(filepath.Join(to, filepath.FromSlash(byHash)), sig, 0o644); err != nil {
		return nil, err
	}
	indexPath := filepath.Join(to, sitelayout.IndexFile)
	if err := switchIndex(indexPath, sig, func() error { return atomicfile.WriteFile(indexPath, data, 0o644) }); err != nil {
		return nil, err
	}
	res.Files = append(res.Files, byHash, sitelayout.SignatureFile, sitelayout.IndexFile)
	return res, nil
}

// sidecars lists the root chain and the keys of the site in dir, sorted:
// root/N.yaml in version order, root.yaml, keys/*.pub and
// keys/keyless.json.
func sidecars(dir string, files *[]string) error {
	roots, err := os.ReadDir(filepath.Join(dir, sitelayout.RootDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var versions []int
	for _, e := range roots {
		var n int
		if e.Type().IsRegular() && rootVersion.MatchString(e.Name()) {
			if _, err := fmt.Sscanf(e.Name(), "%d.yaml", &n); err == nil {
				versions = append(versions, n)
			}
		}
	}
	sort.Ints(versions)
	for _, n := range versions {
		*files = append(*files, sitelayout.RootVersionFile(n))
	}
	if _, err := os.Stat(filepath.Join(dir, sitelayout.RootFile)); err == nil {
		*files = append(*files, sitelayout.RootFile)
	}
	keys, err := filepath.Glob(filepath.Join(dir, sitelayout.KeysDir, "*.pub"))
	if err != nil {
		return err
	}
	sort.Strings(keys)
	for _, k := range keys {
		*files = append(*files, sitelayout.KeysDir+"/"+filepath.Base(k))
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(sitelayout.KeylessFile))); err == nil {
		*files = append(*files, sitelayout.KeylessFile)
	}
	return nil
}

// checkNotNewer refuses to replace the index at dst with src (data) when
// dst's was generated later; it returns src's index without its packages.
func checkNotNewer(dst, src string, data []byte) (*index.RepositoryIndex, error) {
	skip := func(string, *index.IndexPackage) (bool, error) { return false, nil }
	now, err := index.ParseIndexFunc(data, skip)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	old, err := siteread.ReadFile(dst, index.MaxIndexSize)
	if errors.Is(err, siteread.ErrNotFound) {
		return now, nil
	}
	if err != nil {
		return nil, err
	}
	defer siteread.Release(old)
	was, err := index.ParseIndexFunc(old, skip)
	if err != nil {
		return now, nil // not an index: replaced
	}
	if now.Generated.Before(was.Generated) {
		return nil, fmt.Errorf("%s was generated %s, later than %s (%s): subscribers of %s would refuse the copy as a rollback; nothing was copied",
			dst, was.Generated.UTC().Format(time.RFC3339), src, now.Generated.UTC().Format(time.RFC3339), dst)
	}
	return now, nil
}
