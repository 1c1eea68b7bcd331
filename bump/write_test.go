package bump

import (
	"strings"
	"testing"

	"kbuild.dev/kbuild/review"
)

func TestResultWrite(t *testing.T) {
	tests := []struct {
		name           string
		res            Result
		text, markdown string
	}{
		{name: "unchanged", res: Result{Dir: "recipes/a", To: "1.2"},
			text: "recipes/a is at 1.2 already; nothing changed\n", markdown: "recipes/a is at 1.2 already; nothing changed\n"},
		{name: "set waits", res: Result{Dir: "recipes/s", Set: true, Waiting: []string{"a 1.2 build 1"}},
			text: "recipes/s waits until its members' builds are published: a 1.2 build 1; nothing changed\n"},
		{name: "version", res: Result{Changed: true, Dir: "recipes/a", File: "recipes/a/recipe.yaml", Package: "a", From: "1.1", To: "1.2", Build: 1, Changes: []string{"spec.version: 1.1 -> 1.2"}, Report: &review.Report{}},
			text: "bumped recipes/a/recipe.yaml from 1.1 to 1.2\n  spec.version: 1.1 -> 1.2\n\n", markdown: "Bumps `a` from 1.1 to 1.2 (build 1).\n\n<details><summary>1 fields of recipes/a/recipe.yaml changed</summary>\n\n```\nspec.version: 1.1 -> 1.2\n```\n</details>\n\n"},
		{name: "also", res: Result{Changed: true, File: "r.yaml", Package: "a", To: "1.2", Build: 3, Also: []string{"helper 1 -> 2"}, Report: &review.Report{}},
			text: "bumped r.yaml at 1.2 to build 3: helper 1 -> 2\n\n", markdown: "Bumps `a` at 1.2 to build 3: helper 1 -> 2.\n\n"},
		{name: "set", res: Result{Changed: true, Set: true, File: "r.yaml", Package: "s", From: "1", To: "2", Build: 1, Members: []string{"a 1 build 1 -> 2 build 1"}, Report: &review.Report{}},
			text: "bumped release set r.yaml from 1 to 2 build 1: a 1 build 1 -> 2 build 1\n\n", markdown: "Bumps `s` from 1 to 2 (build 1): the release set's members at their published builds, a 1 build 1 -> 2 build 1.\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var text, md strings.Builder
			if err := tc.res.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := tc.res.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(text.String(), tc.text) {
				t.Errorf("WriteText = %q, want it to start with %q", text.String(), tc.text)
			}
			if !strings.HasPrefix(md.String(), tc.markdown) {
				t.Errorf("WriteMarkdown = %q, want it to start with %q", md.String(), tc.markdown)
			}
		})
	}
}
