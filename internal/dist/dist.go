// Package dist reads and writes the build output directory: one build
// record (kind PackageSource) per build, dist/<name>-<version>-<build>.yaml,
// with its BuildInfo sidecar, dist/<name>-<version>-<build>.build.yaml.
package dist

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/spec"
)

// maxRecordSize caps a build record or sidecar read from disk.
const maxRecordSize = 16 << 20

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

// Read returns every build record under dir (recursively, skipping the OCI
// layout under dir/oci), sorted by package name, version and build. YAML files
// of other kinds are ignored.
func Read(dir string) ([]Build, error) {
	var builds []Build
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (d.Name() == "oci" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".build.yaml") || strings.HasSuffix(p, ".sig.yaml") {
			return nil
		}
		data, err := readCapped(p)
		if err != nil {
			return err
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(data, &head); err != nil || head.Kind != spec.RecordKind {
			return nil
		}
		var b Build
		b.File = p
		if err := yaml.UnmarshalStrict(data, &b.Record); err != nil {
			return fmt.Errorf("build record %s: %w", p, err)
		}
		info := strings.TrimSuffix(p, ".yaml") + ".build.yaml"
		if data, err := readCapped(info); err == nil {
			b.Info = new(spec.BuildInfo)
			if err := yaml.UnmarshalStrict(data, b.Info); err != nil {
				return fmt.Errorf("build info %s: %w", info, err)
			}
		} else if !os.IsNotExist(err) {
			return err
		}
		builds = append(builds, b)
		return nil
	})
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

func readCapped(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxRecordSize {
		return nil, fmt.Errorf("%s: %d bytes is larger than the %d-byte limit for a build record", p, fi.Size(), maxRecordSize)
	}
	return os.ReadFile(p)
}

// Unmarshal decodes a record or sidecar strictly.
func Unmarshal(data []byte, v any) error { return yaml.UnmarshalStrict(data, v) }

// Marshal encodes v as YAML with sorted keys, as records are written.
func Marshal(v any) ([]byte, error) { return yaml.Marshal(v) }
