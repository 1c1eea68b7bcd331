package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
)

// maxCompareSize caps what CompareArchives reads from one archive.
const maxCompareSize = 512 << 20

// CompareArchives returns the first file (in sorted order) whose content,
// mode or presence differs between two chart archives, with a sentence
// saying how, or "" when every entry is the same (the archives may still
// differ in timestamps or compression).
func CompareArchives(a, b []byte) (file, how string, err error) {
	fa, err := archiveFiles(a)
	if err != nil {
		return "", "", fmt.Errorf("first archive: %w", err)
	}
	fb, err := archiveFiles(b)
	if err != nil {
		return "", "", fmt.Errorf("second archive: %w", err)
	}
	for _, n := range unionNames(fa, fb) {
		x, inA := fa[n]
		y, inB := fb[n]
		switch {
		case !inA:
			return n, "only in the rebuilt chart", nil
		case !inB:
			return n, "missing from the rebuilt chart", nil
		case !bytes.Equal(x.data, y.data):
			return n, fmt.Sprintf("content differs (%d bytes published, %d rebuilt)", len(x.data), len(y.data)), nil
		case x.mode != y.mode:
			return n, fmt.Sprintf("mode differs (%o published, %o rebuilt)", x.mode, y.mode), nil
		}
	}
	return "", "", nil
}

// unionNames returns the names in a or b, sorted.
func unionNames(a, b map[string]archiveFile) []string {
	names := make([]string, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

type archiveFile struct {
	data []byte
	mode int64
}

func archiveFiles(data []byte) (map[string]archiveFile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(io.LimitReader(zr, maxCompareSize))
	files := map[string]archiveFile{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[h.Name] = archiveFile{b, h.Mode}
	}
}
