package recipe

import (
	"bytes"
	"testing"
)

// TestProblemWriteText: the indented line, and under GitHub the workflow
// annotation with file, line and an escaped message.
func TestProblemWriteText(t *testing.T) {
	p := Problem{Severity: Error, Field: "spec.version", Line: 3, Message: "100% wrong\nsee docs"}
	cases := []struct {
		github bool
		want   string
	}{
		{false, "  error: line 3: spec.version: 100% wrong\nsee docs\n"},
		{true, "  error: line 3: spec.version: 100% wrong\nsee docs\n::error file=r/recipe.yaml,line=3::spec.version: 100%25 wrong%0Asee docs\n"},
	}
	for _, tc := range cases {
		var b bytes.Buffer
		if err := p.WriteText(&b, "r/recipe.yaml", tc.github); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("WriteText(github %v) =\n%q\nwant\n%q", tc.github, b.String(), tc.want)
		}
	}
}
