package patches

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/yamlbound"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		crlf       bool   // convert the file to CRLF line ends first
		want       string // ids of the objects
		wantErr    string
	}{
		{name: "multi", file: "multi.yaml",
			want: "ConfigMap/tmpl@multi.yaml document 1 Deployment/web@multi.yaml document 4 Service/web@multi.yaml document 5"},
		{name: "multi crlf", file: "multi.yaml", crlf: true,
			want: "ConfigMap/tmpl@multi.yaml document 1 Deployment/web@multi.yaml document 4 Service/web@multi.yaml document 5"},
		{name: "lists", file: "list.yaml",
			want: "ServiceAccount/a@list.yaml document 1 item 1 ServiceAccount/b@list.yaml document 1 item 2 ConfigMap/c@list.yaml document 2 item 1"},
		{name: "json", file: "manifest.json", want: "ConfigMap/from-json@manifest.json document 1"},
		{name: "empty", file: "empty.yaml", want: ""},
		{name: "syntax error", file: "bad-syntax.yaml", wantErr: "bad-syntax.yaml document 2: yaml: line 7"},
		{name: "not an object", file: "not-object.yaml", wantErr: "not-object.yaml document 2 (line 6): expected a Kubernetes object (a mapping with apiVersion and kind), got a list"},
		{name: "no kind", file: "no-kind.yaml", wantErr: "no-kind.yaml document 1 (line 2): object has no kind"},
		{name: "bad list item", file: "bad-list.yaml", wantErr: "bad-list.yaml document 1 (line 4): List item 1 is not a Kubernetes object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/split", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if tc.crlf {
				data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
			}
			objs, err := Split(tc.file, data)
			if errMatch(t, err, tc.wantErr) {
				return
			}
			if got := ids(objs); got != tc.want {
				t.Errorf("Split(%s) = %s, want %s", tc.file, got, tc.want)
			}
			out := stream(t, objs)
			if bytes.Contains(out, []byte("\r")) {
				t.Errorf("Split(%s) kept a CR: %q", tc.file, out)
			}
			golden(t, filepath.Join("testdata/split", strings.TrimSuffix(tc.file, filepath.Ext(tc.file))+".golden"), out)
		})
	}
}

// laughs is a billion-laughs document of nine levels of ten aliases.
func laughs() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nl0: &l0 [x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// TestAliasBombs: manifests and values.yaml whose aliases expand far beyond
// their size are refused, naming the file, before anything walks them.
func TestAliasBombs(t *testing.T) {
	if _, err := Split("bomb.yaml", []byte(laughs())); !errors.Is(err, yamlbound.ErrExpansion) || !strings.Contains(err.Error(), "bomb.yaml document 1") {
		t.Errorf("Split(alias bomb) = %v, want yamlbound.ErrExpansion naming the document", err)
	}
	if _, err := MergeValues([]byte(laughs()), map[string]any{"a": 1}); !errors.Is(err, yamlbound.ErrExpansion) || !strings.Contains(err.Error(), "values.yaml") {
		t.Errorf("MergeValues(alias bomb) = %v, want yamlbound.ErrExpansion", err)
	}
}
