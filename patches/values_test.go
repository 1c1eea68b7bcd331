package patches

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/recipe"
)

// Each case is a directory of testdata/values holding values.yaml (absent
// in "absent"), overrides.yaml (a recipe's values) and out.yaml (golden).
func TestMergeValues(t *testing.T) {
	for _, dir := range []string{
		"comments",      // comments and key order kept, new keys sorted, null removes, lists replace
		"empty",         // empty values.yaml
		"absent",        // no values.yaml at all
		"flow",          // values.yaml is {}
		"only-comments", // values.yaml holds only a comment
	} {
		t.Run(dir, func(t *testing.T) {
			dir := filepath.Join("testdata/values", dir)
			values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			got, err := MergeValues(values, readValues(t, filepath.Join(dir, "overrides.yaml")))
			if err != nil {
				t.Fatalf("MergeValues = %v", err)
			}
			golden(t, filepath.Join(dir, "out.yaml"), got)
			// The result reads back as what Helm would compute.
			var m map[string]any
			if err := yaml.Unmarshal(got, &m); err != nil {
				t.Fatalf("result does not parse: %v", err)
			}
		})
	}
}

func TestMergeValuesEdges(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		overrides    map[string]any
		want         string
		wantErr      string
	}{
		{name: "no overrides keeps the file byte for byte", values: "a:    1 # odd spacing\n", want: "a:    1 # odd spacing\n"},
		{name: "scalar replaces map", values: "a:\n  b: 1\n", overrides: map[string]any{"a": "x"}, want: "a: x\n"},
		{name: "map replaces scalar", values: "a: 1\n", overrides: map[string]any{"a": map[string]any{"b": 2.0}}, want: "a:\n  b: 2\n"},
		{name: "yaml 1.1 words stay strings", values: "", overrides: map[string]any{"on": "on", "t": "1:20"}, want: "\"on\": \"on\"\nt: \"1:20\"\n"},
		{name: "crlf", values: "a: 1\r\nb: 2\r\n", overrides: map[string]any{"b": 3.0}, want: "a: 1\nb: 3\n"},
		{name: "list at top", values: "- a\n", overrides: map[string]any{"a": 1.0}, wantErr: "values.yaml: top level is a list, expected a mapping of values"},
		{name: "bad yaml", values: "a: [\n", overrides: map[string]any{"a": 1.0}, wantErr: "values.yaml: yaml: line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MergeValues([]byte(tc.values), tc.overrides)
			if errMatch(t, err, tc.wantErr) {
				return
			}
			if string(got) != tc.want {
				t.Errorf("MergeValues(%q, %v) = %q, want %q", tc.values, tc.overrides, got, tc.want)
			}
		})
	}
}

// readValues decodes a recipe values map the way the recipe decoder does.
func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// manyKeys returns a values.yaml of n keys and overrides for the first m
// and the last four of them, half changed, a quarter deleted and a quarter
// new.
func manyKeys(n, m int) ([]byte, map[string]any) {
	var b strings.Builder
	over := map[string]any{}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "k%d: %d\n", i, i)
		if i >= m && i < n-4 {
			continue
		}
		switch i % 4 {
		case 0, 1:
			over[fmt.Sprintf("k%d", i)] = "changed"
		case 2:
			over[fmt.Sprintf("k%d", i)] = nil
		case 3:
			over[fmt.Sprintf("new%d", i)] = i
		}
	}
	return []byte(b.String()), over
}

// TestMergeValuesManyKeys merges the most keys a recipe may set into a
// values.yaml of 190k keys (once over two minutes: each key was found by a
// scan) and checks the result.
func TestMergeValuesManyKeys(t *testing.T) {
	values, over := manyKeys(190_000, recipe.MaxValueKeys-4)
	out, err := MergeValues(values, over)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"k0: changed\n", "k1: changed\n", "k3: 3\n", "new3: 3\n", "new189999: 189999\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("merged values lack %q", want)
		}
	}
	if strings.Contains(s, "k2: ") || strings.Contains(s, "\nk189998: ") {
		t.Error("merged values keep a deleted key")
	}
}

func BenchmarkMergeValues(b *testing.B) {
	for _, n := range []int{1_000, 190_000} {
		values, over := manyKeys(n, min(n, recipe.MaxValueKeys-4))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := MergeValues(values, over); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMergeValuesLinear: merging twice the keys allocates about twice as
// much (no work per key that grows with the keys), and more keys than a
// recipe may set are refused.
func TestMergeValuesLinear(t *testing.T) {
	allocs := func(n int) float64 {
		m := map[string]any{}
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("k%06d", i)] = map[string]any{"a": i}
		}
		base := []byte("a: 1\n")
		return testing.AllocsPerRun(2, func() {
			if _, err := MergeValues(base, m); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(1000), allocs(4000)
	if large > 4.6*small {
		t.Errorf("MergeValues allocates %.0f times for 1000 keys and %.0f for 4000: more than linear", small, large)
	}
	m := map[string]any{}
	for i := 0; i <= recipe.MaxValueKeys; i++ {
		m[fmt.Sprint(i)] = i
	}
	if _, err := MergeValues([]byte("a: 1\n"), m); err == nil || !strings.Contains(err.Error(), "more than 10000 keys") {
		t.Errorf("MergeValues(%d keys) = %v, want a refusal", len(m), err)
	}
}
