package siteread

// Root files as kbuild trust root new, next and sign edit them: a root
// file (root.yaml) with every version beside it in root/<N>.yaml.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/trust"
)

// ReadRootFile reads and parses the root of trust in file (errors name
// it). Its signatures are not checked: it is being edited.
func ReadRootFile(file string) (*trust.Root, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r, err := trust.ParseRoot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return r, nil
}

// WriteRootFile writes r to file, whole or not at all.
func WriteRootFile(file string, r *trust.Root) error {
	b, err := r.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(file, b, 0o644)
}

// RootChainFile returns root/<version>.yaml beside the root file.
func RootChainFile(file string, version int) string {
	return filepath.Join(filepath.Dir(file), filepath.FromSlash(sitelayout.RootVersionFile(version)))
}

// KeepRootVersion writes r to root/<N>.yaml beside file unless a file is
// there, so that the chain subscribers walk keeps every version; it
// returns the path written, "" when it was there.
func KeepRootVersion(file string, r *trust.Root) (string, error) {
	p := RootChainFile(file, r.Signed.Version)
	if _, err := os.Stat(p); err == nil {
		return "", nil
	}
	return p, WriteRootFile(p, r)
}

// WriteRootVersion writes a new root version r to file and to
// root/<N>.yaml beside it, the chain copy first, and returns the chain
// copy's path. With fresh (version 1 of a new root of trust) neither file
// may exist: a new root of trust is a new repository.
func WriteRootVersion(file string, r *trust.Root, fresh bool) (string, error) {
	p := RootChainFile(file, r.Signed.Version)
	if fresh {
		if _, err := os.Stat(file); err == nil {
			return "", fmt.Errorf("%s exists: %w", file, ErrRootExists)
		}
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("%s exists; refusing to overwrite a root version", p)
		}
	}
	if err := WriteRootFile(p, r); err != nil {
		return "", err
	}
	return p, WriteRootFile(file, r)
}

// SignRootFile adds the signature of each of keys to the root in file
// (replacing an earlier one by the same key) and writes it back once, and
// to root/<N>.yaml beside it when that holds the same signed content.
func SignRootFile(file string, keys ...trust.Signer) (*trust.Root, error) {
	if len(keys) == 0 {
		return nil, errors.New("signing a root needs a key")
	}
	r, err := ReadRootFile(file)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := r.Sign(k); err != nil {
			return nil, err
		}
	}
	chain := RootChainFile(file, r.Signed.Version)
	if old, err := ReadRootFile(chain); err == nil {
		od, oerr := old.Digest()
		nd, nerr := r.Digest()
		if oerr == nil && nerr == nil && od == nd {
			if err := WriteRootFile(chain, r); err != nil {
				return nil, err
			}
		}
	}
	if err := WriteRootFile(file, r); err != nil {
		return nil, err
	}
	return r, nil
}

// RootWritten is what NewRootFile and NextRootFile wrote: the new root,
// its copy in root/<N>.yaml beside the root file, and for a next version
// the previous version kept in the chain ("" when it was there already).
type RootWritten struct {
	Root  *trust.Root
	Chain string
	Kept  string
}

// NewRootFile makes version 1 of a root of trust, unsigned, from edit
// (trust.RootEdit.Apply on an empty config) and writes it to file and
// root/1.yaml beside it; neither may exist (WriteRootVersion).
func NewRootFile(file string, edit trust.RootEdit) (*RootWritten, error) {
	var c trust.RootConfig
	if err := edit.Apply(&c, true); err != nil {
		return nil, err
	}
	r, err := trust.NewRoot(c)
	if err != nil {
		return nil, err
	}
	p, err := WriteRootVersion(file, r, true)
	if err != nil {
		return nil, err
	}
	return &RootWritten{Root: r, Chain: p}, nil
}

// NextRootFile makes the next version of the root in prev, unsigned,
// changed by edit, keeps prev's version in the chain beside out
// (KeepRootVersion) and writes the new version to out and root/<N>.yaml
// beside it. What was kept is in the result also when writing the new
// version fails.
func NextRootFile(prev, out string, edit trust.RootEdit) (*RootWritten, error) {
	old, err := ReadRootFile(prev)
	if err != nil {
		return nil, err
	}
	c, err := old.Config()
	if err != nil {
		return nil, err
	}
	if err := edit.Apply(&c, false); err != nil {
		return nil, err
	}
	r, err := old.Next(c)
	if err != nil {
		return nil, err
	}
	w := &RootWritten{Root: r}
	if w.Kept, err = KeepRootVersion(out, old); err != nil {
		return nil, err
	}
	w.Chain, err = WriteRootVersion(out, r, false)
	return w, err
}
