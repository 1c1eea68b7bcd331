package dist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// SigSuffix ends the name of a record's sidecar of delegated signatures:
// dist/kubevirt-1.9.0-4.yaml has dist/kubevirt-1.9.0-4.sig.yaml.
const SigSuffix = ".sig.yaml"

// SidecarPath returns the path of the signature sidecar of the record at
// path.
func SidecarPath(path string) string {
	return strings.TrimSuffix(strings.TrimSuffix(path, ".yaml"), ".yml") + SigSuffix
}

// Add reads every build record under dir into b, in parallel: it skips
// dir/oci, hidden directories, BuildInfo and signature sidecars and YAML of
// other kinds, and adds each record's sidecar signatures. Errors of all
// records are returned together.
func Add(ctx context.Context, b *index.Builder, dir string) error {
	return AddPinning(ctx, b, dir, nil)
}

// Pinner fills in the archive digest of a chart a record names without
// one (trust on first use, as kubepkg repo index does).
type Pinner func(ctx context.Context, c *spec.ChartRef) error

// AddPinning is Add; with pin, a record whose components name charts
// without a digest has them pinned by pin before it is added (the record
// file is left as it is). Without pin such a record is refused.
func AddPinning(ctx context.Context, b *index.Builder, dir string, pin Pinner) error {
	// List and read at once: the workers start on the first records while
	// the directory is still being listed.
	jobs := make(chan job, 256)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Go(func() {
			var buf []byte // reused: a compact Builder keeps nothing of it
			for j := range jobs {
				var err error
				if buf, err = add(ctx, b, j.record, j.sidecar, buf, pin); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	werr := walk(ctx, dir, jobs)
	close(jobs)
	wg.Wait()
	if werr != nil {
		return werr
	}
	if len(errs) > 0 {
		return errors.Join(sortErrors(errs)...)
	}
	return nil
}

// AddRecords adds the build records at paths to b, each with its
// signature sidecar when one exists beside it (see SidecarPath). Unlike
// Add it reads only the files named: publish signs what its run built, not
// whatever else the build directory holds. A file that is not a record is
// an error.
func AddRecords(b *index.Builder, paths []string) error {
	var errs []error
	for _, p := range paths {
		sidecar := SidecarPath(p)
		if _, err := os.Stat(sidecar); err != nil {
			sidecar = ""
		}
		data, err := readCapped(p, index.MaxRecordSize, nil)
		if err == nil {
			err = addData(context.Background(), b, p, data, sidecar, nil)
		}
		if errors.Is(err, index.ErrNotRecord) {
			err = fmt.Errorf("%s: not a build record (kind %s)", p, spec.RecordKind)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// add reads the record at p into buf and adds it to b with the
// signatures of sidecar; it returns buf for reuse.
func add(ctx context.Context, b *index.Builder, p, sidecar string, buf []byte, pin Pinner) ([]byte, error) {
	data, err := readCapped(p, index.MaxRecordSize, buf)
	if err != nil {
		return buf, err
	}
	if err := addData(ctx, b, p, data, sidecar, pin); err != nil && !errors.Is(err, index.ErrNotRecord) {
		return data, err
	}
	return data, nil
}

// addData adds the record data read from p with the signatures of
// sidecar ("" for none); with pin, charts the record names without a
// digest are pinned first.
func addData(ctx context.Context, b *index.Builder, p string, data []byte, sidecar string, pin Pinner) error {
	var sigs []index.Signature
	if sidecar != "" {
		sd, err := readCapped(sidecar, index.MaxSignaturesSize, nil)
		if err != nil {
			return err
		}
		if sigs, err = index.ParseSignatures(sd); err != nil {
			return fmt.Errorf("signature sidecar %s: %w", sidecar, err)
		}
	}
	if pin == nil {
		return b.AddRecord(p, data, sigs)
	}
	return b.AddRecordWith(p, data, sigs, func(rec *spec.PackageSource) error {
		if !unpinned(rec) {
			return nil
		}
		for vi := range rec.Spec.Variants {
			for ci := range rec.Spec.Variants[vi].Components {
				if c := rec.Spec.Variants[vi].Components[ci].Chart; c != nil && c.Digest == "" {
					// The record may be parsed in place, in a buffer used
					// again for the next one: pin sees strings of its own.
					own := spec.ChartRef{Repository: strings.Clone(c.Repository), Name: strings.Clone(c.Name), Version: strings.Clone(c.Version)}
					if err := pin(ctx, &own); err != nil {
						return fmt.Errorf("%s: chart %s %s: %w", p, own.Name, own.Version, err)
					}
					c.Digest = own.Digest
				}
			}
		}
		return nil
	})
}

// unpinned reports whether a component of rec names a chart without a
// digest.
func unpinned(rec *spec.PackageSource) bool {
	for _, v := range rec.Spec.Variants {
		for _, c := range v.Components {
			if c.Chart != nil && c.Chart.Digest == "" {
				return true
			}
		}
	}
	return false
}

// sortErrors orders errors by message, so that output does not depend on
// the order workers finished in, and drops repeated ones (a record read
// twice, the second time for its sidecar, fails twice).
func sortErrors(errs []error) []error {
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return slices.CompactFunc(errs, func(a, b error) bool { return a.Error() == b.Error() })
}
