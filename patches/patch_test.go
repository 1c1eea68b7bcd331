package patches

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kbuild.dev/kbuild/recipe"
	"sigs.k8s.io/yaml"
)

// Each case is a directory of testdata/patch holding in.yaml (the objects),
// patches.yaml (a recipe's patches list) and, when the patches apply,
// out.yaml (the golden result).
func TestApply(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		wantErr string
		noMatch bool // the error wraps ErrNoMatch
	}{
		// RFC 7386: null deletes, lists replace, maps merge, new keys sorted,
		// comments and order of the rest kept.
		{dir: "merge"},
		// kind-only and name-only selectors patch every object they match.
		{dir: "merge-several"},
		// containers, initContainers, env, volumes, volumeMounts merged by
		// key; ports by containerPort with protocol defaulting to TCP.
		{dir: "strategic-containers"},
		// $patch delete/replace, $retainKeys, $deleteFromPrimitiveList,
		// $setElementOrder, null.
		{dir: "strategic-directives"},
		// StatefulSet, DaemonSet, Job, CronJob, Pod and Service.
		{dir: "strategic-kinds"},
		// A kind without schema: maps merge, lists replace, a list-level
		// $patch: delete removes the list.
		{dir: "strategic-custom"},
		// add, remove, replace, move, copy, test and ~1 escapes.
		{dir: "json6902"},
		{dir: "nomatch-name", noMatch: true,
			wantErr: "patch 1 (merge) {kind: Deployment, name: wbe}: matches no object; Deployment objects present: web"},
		{dir: "nomatch-kind", noMatch: true,
			wantErr: "patch 0 (strategic) {kind: StatefulSet, name: web}: matches no object; no StatefulSet object exists; kinds present: Deployment, Service"},
		{dir: "two-forms",
			wantErr: "patch 0 {kind: Deployment}: has 2 of merge, strategic and json6902 (merge, json6902); set exactly one"},
		{dir: "no-selector", wantErr: "patch 0: neither kind nor name is set"},
		{dir: "json6902-test-fails",
			wantErr: "patch 0 (json6902) on Deployment/web (in.yaml document 1): op 1 (test /spec/template/spec/containers/0/image): test failed: value is web:1, expected web:9"},
		{dir: "json6902-missing",
			wantErr: "op 0 (remove /spec/template/spec/containers/3): /spec/template/spec/containers/3: index 3 is out of range (the list has 1 items)"},
		{dir: "json6902-unknown-op", wantErr: `unknown op "merge"; use add, remove, replace, move, copy or test`},
		{dir: "json6902-move-into-child", wantErr: "cannot move /spec into itself"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("testdata/patch", tc.dir)
			objs := splitFile(t, filepath.Join(dir, "in.yaml"))
			before := string(stream(t, objs))
			ps := readPatches(t, filepath.Join(dir, "patches.yaml"))
			err := Apply(objs, ps)
			if errMatch(t, err, tc.wantErr) {
				if errors.Is(err, ErrNoMatch) != tc.noMatch {
					t.Errorf("errors.Is(%v, ErrNoMatch) = %v, want %v", err, !tc.noMatch, tc.noMatch)
				}
				if tc.dir != "nomatch-name" && string(stream(t, objs)) != before {
					t.Errorf("Apply failed but changed the objects")
				}
				return
			}
			golden(t, filepath.Join(dir, "out.yaml"), stream(t, objs))
		})
	}
}

// readPatches decodes a patches list the way the recipe decoder does
// (YAML to JSON to structs, so numbers are float64).
func readPatches(t *testing.T, file string) []recipe.Patch {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ps []recipe.Patch
	if err := yaml.UnmarshalStrict(data, &ps); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return ps
}
