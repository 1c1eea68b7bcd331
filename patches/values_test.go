package patches

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
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
