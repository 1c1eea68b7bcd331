package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/ignore"
)

// gzipLevel is the one compression level every chart archive is written
// with; changing it changes every digest.
const gzipLevel = gzip.BestCompression

// gzipWriters keeps gzip writers for reuse: a compressor at gzipLevel is
// some 600 KiB to allocate, more than most charts it packs. (A sync.Pool
// loses them at every collection, which building runs often.)
var gzipWriters = make(chan *gzip.Writer, 16)

func getGzipWriter(w io.Writer) *gzip.Writer {
	select {
	case zw := <-gzipWriters:
		// A reset writer is a new one: Name empty and ModTime zero, so
		// the header carries no name and no time.
		zw.Reset(w)
		return zw
	default:
		zw, _ := gzip.NewWriterLevel(w, gzipLevel) // gzipLevel is valid
		return zw
	}
}

func putGzipWriter(zw *gzip.Writer) {
	select {
	case gzipWriters <- zw:
	default:
	}
}

// maxChartSize caps the packed size of one chart.
const maxChartSize = 256 << 20

// Archive is a packed chart: the .tgz bytes and their sha256.
type Archive struct {
	Name    string // chart name, the top directory in the archive
	Version string
	Data    []byte
	Digest  string // "sha256:<hex>" of Data
}

// Pack writes the chart in dir as a .tgz whose bytes depend only on the
// chart's file names and contents: entries sorted under "<name>/" (as
// `helm package` lays them out), mtime set to epoch, uid/gid 0, no user or
// group names, mode 0644 (0755 when any execute bit is set), no directory
// entries, and a gzip header without name or time. Files matched by
// .helmignore are left out. A symlink is refused: charts carry none.
func Pack(dir, name, version string, epoch time.Time) (*Archive, error) {
	rules, err := helmignore(dir)
	if err != nil {
		return nil, err
	}
	var files []packEntry
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(rel, fi) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("chart %s: %s is a symlink; charts carry plain files only (copy the target into the chart instead)", name, rel)
		case !d.Type().IsRegular():
			return fmt.Errorf("chart %s: %s is not a regular file", name, rel)
		}
		mode := int64(0o644)
		if fi.Mode()&0o111 != 0 {
			mode = 0o755
		}
		files = append(files, packEntry{rel, mode})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return writeArchive(name, version, epoch, files, func(rel string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	})
}

// packTree packs an assembled chart from memory into the same archive Pack
// writes for the chart written to a directory: .helmignore (with Helm's
// defaults) leaves out what it matches, an ignored directory with all in
// it.
func packTree(t chartTree, name, version string, epoch time.Time) (*Archive, error) {
	rules := ignore.Empty()
	if f := t[ignore.HelmIgnore]; f != nil && !f.dir {
		var err error
		if rules, err = ignore.Parse(bytes.NewReader(f.data)); err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", name, ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()
	var entries []packEntry
	for _, rel := range slices.Sorted(maps.Keys(t)) {
		if f := t[rel]; !f.dir && !ignored(rules, rel) {
			mode := int64(0o644)
			if f.mode&0o111 != 0 {
				mode = 0o755
			}
			entries = append(entries, packEntry{rel: rel, mode: mode})
		}
	}
	return writeArchive(name, version, epoch, entries, func(rel string) ([]byte, error) { return t[rel].data, nil })
}

// packEntry is one file of an archive: its path in the chart and tar mode.
type packEntry struct {
	rel  string
	mode int64
}

// writeArchive writes entries, sorted by path, as the chart archive
// (see Pack), reading each file's content with read.
func writeArchive(name, version string, epoch time.Time, entries []packEntry, read func(rel string) ([]byte, error)) (*Archive, error) {
	var buf bytes.Buffer
	// gzip.Writer leaves Name empty and ModTime zero, so the header carries
	// no name and no time.
	zw := getGzipWriter(&buf)
	defer putGzipWriter(zw)
	tw := tar.NewWriter(zw)
	mtime := epoch.UTC()
	for _, f := range entries {
		data, err := read(f.rel)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     name + "/" + f.rel,
			Size:     int64(len(data)),
			Mode:     f.mode,
			ModTime:  mtime,
			Format:   tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
		if buf.Len() > maxChartSize {
			return nil, fmt.Errorf("chart %s: packed size passes the %d MiB limit", name, maxChartSize>>20)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return &Archive{Name: name, Version: version, Data: buf.Bytes(), Digest: "sha256:" + hex.EncodeToString(sum[:])}, nil
}

// helmignore returns the chart's .helmignore rules with Helm's defaults.
func helmignore(dir string) (*ignore.Rules, error) {
	p := filepath.Join(dir, ignore.HelmIgnore)
	rules := ignore.Empty()
	if _, err := os.Stat(p); err == nil {
		if rules, err = ignore.ParseFile(p); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	rules.AddDefaults()
	return rules, nil
}

// SourceDateEpoch returns the time in SOURCE_DATE_EPOCH (seconds since
// 1970) or the Unix epoch when it is unset. getenv is os.Getenv in
// production.
func SourceDateEpoch(getenv func(string) string) (time.Time, error) {
	s := strings.TrimSpace(getenv("SOURCE_DATE_EPOCH"))
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	var sec int64
	if _, err := fmt.Sscan(s, &sec); err != nil || sec < 0 || fmt.Sprint(sec) != s {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a whole number of seconds since 1970", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}
