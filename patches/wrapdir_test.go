package patches

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Wrap writes, for the tests, a Helm chart named chartName holding objs into the directory
// dst, which must be absent or empty: the files of WrapFiles, each 0644.
func Wrap(dst, chartName string, objs []*Object, opts WrapOptions) error {
	if entries, err := os.ReadDir(dst); err == nil && len(entries) > 0 {
		return fmt.Errorf("wrap chart %s into %s: directory is not empty; give Wrap a new directory", chartName, dst)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("wrap chart %s: %w", chartName, err)
	}
	files, err := WrapFiles(chartName, objs, opts)
	if err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("wrap chart %s: %w", chartName, err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("wrap chart %s: %w", chartName, err)
		}
	}
	return nil
}
