package sources

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"

	"kbuild.dev/kbuild/spec"
)

// fetchDir resolves a dir source: a directory inside the recipe directory.
// It is used in place, not copied.
func (f *Fetcher) fetchDir(recipeDir, dir string) (*Result, error) {
	root, err := filepath.Abs(recipeDir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("recipe directory: %w", err)
	}
	if !filepath.IsLocal(filepath.FromSlash(dir)) {
		return nil, fmt.Errorf("dir %q leaves the recipe directory %s; use a relative path inside it: %w", dir, root, ErrUnsafe)
	}
	target, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, fmt.Errorf("dir %q: %w", dir, err)
	}
	if !within(root, target) {
		return nil, fmt.Errorf("dir %q resolves to %s, outside the recipe directory %s: %w", dir, target, root, ErrUnsafe)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("dir %q is not a directory", dir)
	}
	if err := checkLinks(root, target); err != nil {
		return nil, fmt.Errorf("dir %q: %w", dir, err)
	}
	digest, err := HashDir(target)
	if err != nil {
		return nil, err
	}
	return &Result{Path: target, Resolved: spec.ResolvedSource{Kind: KindDir, Origin: dir, Digest: digest}}, nil
}

// checkLinks checks that every symlink below dir resolves inside root.
func checkLinks(root, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		if err := checkInside(root, p); err != nil {
			rel, _ := filepath.Rel(dir, p)
			return fmt.Errorf("symlink %s %w", rel, err)
		}
		return nil
	})
}

// HashDir returns a deterministic digest ("sha256:<hex>") of the tree at
// dir: its entries in sorted path order, each with its kind and slash-
// separated relative path; files add whether they are executable (the
// only mode bit kept) and the sha256 of their content, symlinks their
// target (links are not followed), directories nothing. Times, owners and
// other mode bits are ignored, so the same tree hashes the same on any
// machine. A symlink given as dir is resolved first. Other file types (devices, sockets, FIFOs) are an error.
func HashDir(dir string) (string, error) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("hash: %w", err)
	}
	h := sha256.New()
	h.Write([]byte("kbuild-tree-v1\x00"))
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t.IsDir():
			record(h, 'd', rel)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			record(h, 'l', rel)
			writeString(h, target)
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			kind := byte('f')
			if fi.Mode()&0o111 != 0 {
				kind = 'x'
			}
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			sum, _, err := hashReader(in)
			in.Close()
			if err != nil {
				return err
			}
			record(h, kind, rel)
			raw, _ := hex.DecodeString(sum[len("sha256:"):])
			h.Write(raw)
		default:
			return fmt.Errorf("%s is not a file, directory or symlink (%s)", rel, t)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", dir, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func record(h hash.Hash, kind byte, rel string) {
	h.Write([]byte{kind})
	writeString(h, rel)
}

func writeString(h hash.Hash, s string) {
	h.Write(binary.AppendUvarint(nil, uint64(len(s))))
	h.Write([]byte(s))
}
