package dist

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// maxInfoSize caps a BuildInfo sidecar read from disk.
const maxInfoSize = 16 << 20

// Build is one build read back from a dist directory.
type Build struct {
	// File is the record's path.
	File   string
	Record spec.PackageSource
	// Info is the BuildInfo sidecar, nil when absent.
	Info *spec.BuildInfo
}

// Key returns "<name>-<version>-<build>", the base of the record's file name.
func Key(name, version string, build int) string {
	return fmt.Sprintf("%s-%s-%d", name, version, build)
}

// RecordPath returns the path of a build record in dir.
func RecordPath(dir, name, version string, build int) string {
	return filepath.Join(dir, Key(name, version, build)+".yaml")
}

// InfoPath returns the path of a BuildInfo sidecar in dir.
func InfoPath(dir, name, version string, build int) string {
	return filepath.Join(dir, Key(name, version, build)+".build.yaml")
}

// Read returns every build record under dir, sorted by package name,
// version and build, each with its BuildInfo sidecar. It finds the records
// as Add does (dir/oci, hidden directories and sidecars skipped) and
// parses them with index.ParseRecord, the parser of index.Builder; YAML
// files of other kinds are ignored.
func Read(dir string) ([]Build, error) {
	jobs := make(chan job, 256)
	var werr error
	go func() {
		werr = walk(context.Background(), dir, jobs)
		close(jobs)
	}()
	var builds []Build
	var err error
	seen := map[string]bool{}
	for j := range jobs {
		if err != nil || seen[j.record] {
			continue // drain: walk sends a record again when its sidecar comes later
		}
		seen[j.record] = true
		var b *Build
		if b, err = readBuild(j.record); b != nil {
			builds = append(builds, *b)
		}
	}
	if werr != nil {
		return nil, werr
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(builds, func(i, j int) bool {
		a, b := builds[i].Record, builds[j].Record
		if a.Metadata.Name != b.Metadata.Name {
			return a.Metadata.Name < b.Metadata.Name
		}
		if a.Spec.Version != b.Spec.Version {
			return a.Spec.Version < b.Spec.Version
		}
		return a.Spec.Build < b.Spec.Build
	})
	return builds, nil
}

// readBuild reads the record at p and its BuildInfo sidecar; it returns
// nil for a document of another kind.
func readBuild(p string) (*Build, error) {
	data, err := readCapped(p, index.MaxRecordSize, nil)
	if err != nil {
		return nil, err
	}
	rec, err := index.ParseRecord(data)
	if errors.Is(err, index.ErrNotRecord) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("build record %s: %w", p, err)
	}
	b := &Build{File: p, Record: *rec}
	info := strings.TrimSuffix(strings.TrimSuffix(p, ".yaml"), ".yml") + ".build.yaml"
	if data, err := readCapped(info, maxInfoSize, nil); err == nil {
		b.Info = new(spec.BuildInfo)
		if err := yaml.UnmarshalStrict(data, b.Info); err != nil {
			return nil, fmt.Errorf("build info %s: %w", info, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return b, nil
}

// Unmarshal decodes a record or sidecar strictly.
func Unmarshal(data []byte, v any) error { return yaml.UnmarshalStrict(data, v) }

// Marshal encodes v as YAML with sorted keys, as records are written.
func Marshal(v any) ([]byte, error) { return yaml.Marshal(v) }
