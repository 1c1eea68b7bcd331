package siteread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"kbuild.dev/kbuild/internal/atomicfile"
	"kbuild.dev/kbuild/trust"
)

// maxStateFile bounds a subscriber state file: it records one index and
// one root version, a few hundred bytes.
const maxStateFile = 1 << 20

// ReadState reads the subscriber state kbuild repo verify --state records
// (the last accepted index and root); nil, and no error, when file does
// not exist yet.
func ReadState(file string) (*trust.State, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(b) > maxStateFile {
		return nil, fmt.Errorf("%s: larger than %d bytes, so not a state file kbuild wrote", file, maxStateFile)
	}
	s, err := trust.ParseState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// WriteState records s in file, whole or not at all.
func WriteState(file string, s *trust.State) error {
	b, err := s.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(file, b, 0o644)
}
