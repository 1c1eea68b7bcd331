package index

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/yamlscan"
)

// FuzzParseIndex checks that ParseIndex never panics, that the fast reader
// agrees with sigs.k8s.io/yaml on everything it accepts, and that what
// parses writes back byte for byte as sigs.k8s.io/yaml would and parses
// again to the same index.
func FuzzParseIndex(f *testing.F) {
	// Small seeds keep executions and minimisation fast.
	rng := rand.New(rand.NewSource(5))
	for n := 0; n < 6; {
		if b, err := sigsyaml.Marshal(randIndex(rng)); err == nil && len(b) < 3000 {
			f.Add(b)
			n++
		}
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "index.golden.yaml")); err == nil && len(b) < 8000 {
		f.Add(b)
	}
	f.Add([]byte("apiVersion: kubepkg.dev/v1alpha1\nkind: RepositoryIndex\ngenerated: \"2026-10-10T12:00:00Z\"\npackages: {}\n"))
	f.Add([]byte("a: &a [*a, *a]\nb: &b [*a, *a]\n"))
	f.Add([]byte("apiVersion: kubepkg.dev/v1alpha1\nkind: RepositoryIndex\ngenerated: \"2026-10-10T12:00:00Z\"\npackages: {}\nwithdrawn:\n- build: 1\n  digest: sha256:" + strings.Repeat("a", 64) + "\n  package: x\n  reason: 'bad: see #7'\n  version: 1.0.0\n  withdrawn: \"2026-10-11T12:00:00Z\"\n"))
	f.Add([]byte("mirror:\n  a: [b]\npackages:\n  x:\n    keywords:\n    - - a\n    versions:\n    - build: 1\n      spec:\n        retries: {}\n        version: 1.0.0\n        variants:\n        - name: x\n          new:\n          - a: 1\n            b: null\n          - |\n            text\n      version: 1.0.0\n"))
	f.Add([]byte("packages:\n  x:\n    versions:\n    - spec:\n        images: ['a', \"b\\u0041\", c]\n        version: |-\n          x\n"))
	// Unknown fields in YAML the fast reader checks on its own (SkipValue).
	f.Add([]byte("apiVersion: kubepkg.dev/v1alpha1\nkind: RepositoryIndex\nmirror: {url: 'https://m', w: [1,\n  2]}\npackages:\n  x:\n    labels: {a: [1, 2]}\n    versions:\n    - build: 1\n      digest: sha256:" + strings.Repeat("a", 64) + "\n      note: >\n        folded\n      spec:\n        retries: {max: 3}\n        version: 1.0.0\n      version: 1.0.0\n    - build: 2\n      digest: sha256:" + strings.Repeat("b", 64) + "\n      spec:\n        build: 2\n        version: 1.0.0\n        x: !!str y\n      version: 1.0.0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParseIndex(data)
		// The fast reader and yaml.v2 agree on what the fast reader accepts.
		if r, rerr := newYReader(data); rerr == nil {
			var fast RepositoryIndex
			if ferr := readIndex(r, &fast, keepAll); ferr == nil {
				var slow RepositoryIndex
				if serr := yamlscan.DecodeStrict(data, "index", &slow); serr != nil {
					t.Fatalf("fast reader accepted what sigs.k8s.io/yaml refuses: %v\n%q", serr, data)
				}
				if !reflect.DeepEqual(&fast, &slow) {
					t.Fatalf("fast reader and sigs.k8s.io/yaml differ\nfast %+v\nslow %+v\n%q", fast, slow, data)
				}
			} else {
				var bail *yamlscan.Bail
				if !errors.As(ferr, &bail) {
					t.Fatalf("fast reader error that is not a bail: %v", ferr)
				}
			}
		}
		// Read leniently, the fast reader and readLenient (as kubepkg's
		// client reads) agree on what the fast reader accepts, unknown
		// fields and versions left out included.
		if fast, ferr := readIndexFast(data, false, keepAll); ferr == nil {
			slow, serr := readLenient(data)
			if serr != nil {
				t.Fatalf("lenient fast reader accepted what readLenient refuses: %v\n%q", serr, data)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("lenient fast reader and readLenient differ\nfast %+v\nslow %+v\n%q", fast, slow, data)
			}
		}
		// The parallel split and the visitor that drops each package (its
		// memory used again, as Verify does) see the same index.
		defer func(n int) { parallelMinBytes = n }(parallelMinBytes)
		parallelMinBytes = 1
		px, perr := ParseIndex(data)
		if (perr == nil) != (err == nil) || err == nil && !reflect.DeepEqual(x, px) {
			t.Fatalf("parallel parse differs: %v, %v", perr, err)
		}
		seen := map[string][]string{}
		var mu sync.Mutex
		_, verr := parseIndex(data, false, func(name string, p *IndexPackage) (bool, error) {
			if err := checkPackage(name, p); err != nil {
				return false, err
			}
			var ds []string
			for _, v := range p.Versions {
				d, _ := v.Spec.Digest()
				ds = append(ds, d+v.Version)
			}
			mu.Lock()
			seen[name] = ds
			mu.Unlock()
			return false, nil
		})
		if (verr == nil) != (err == nil) {
			t.Fatalf("visiting parse: %v, plain parse: %v", verr, err)
		}
		if err != nil {
			return
		}
		for name, p := range x.Packages {
			var ds []string
			for _, v := range p.Versions {
				d, _ := v.Spec.Digest()
				ds = append(ds, d+v.Version)
			}
			if !reflect.DeepEqual(ds, seen[name]) {
				t.Fatalf("package %s visited as %v, parsed as %v", name, seen[name], ds)
			}
		}
		out, err := x.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed index: %v", err)
		}
		want, err := sigsyaml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("Marshal differs from sigs.k8s.io/yaml:\n%s", firstDiff(out, want))
		}
		y, err := ParseIndex(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		x.Unknown = nil // never written
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("index changed by a round trip")
		}
	})
}
