package review

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"kbuild.dev/kbuild/builder"
)

// TestDiffRun: each recipe's report in turn (text reports apart by an
// empty line, Markdown naming the command), a recipe that cannot be
// compared does not stop the others, and only FailImmutable makes a
// release changed in place an error.
func TestDiffRun(t *testing.T) {
	dep := deployment("sys", "op", imageV1, 1)
	reports := map[string]*Report{
		"new":     Compare(nil, pkg("1.0.0", 1, digestA, nil, dep)),
		"inplace": Compare(pkg("1.0.0", 1, digestA, nil, dep), pkg("1.0.0", 1, digestB, nil, dep)),
	}
	against := func(ctx context.Context, dir string) (*Report, error) {
		if r, ok := reports[dir]; ok {
			return r, nil
		}
		return nil, fmt.Errorf("recipe %s: no such recipe", dir)
	}
	text := func(dir string) string {
		var b strings.Builder
		reports[dir].WriteText(&b)
		return b.String()
	}
	markdown := func(dir string) string {
		var b strings.Builder
		reports[dir].WriteMarkdown(&b, WithCommand("kbuild diff "+dir))
		return b.String()
	}
	for _, tc := range []struct {
		name      string
		d         Diff
		dirs      []string
		want      string
		errs      []string
		immutable bool
	}{
		{name: "text", dirs: []string{"new", "inplace"}, want: text("new") + "\n" + text("inplace")},
		{name: "one fails", dirs: []string{"gone", "new"}, want: "\n" + text("new"), errs: []string{"recipe gone: no such recipe"}},
		{name: "markdown", d: Diff{Markdown: true, Command: func(dir string) string { return "kbuild diff " + dir }}, dirs: []string{"new", "inplace"},
			want: markdown("new") + markdown("inplace")},
		{name: "fail immutable", d: Diff{FailImmutable: true}, dirs: []string{"new", "inplace"}, want: text("new") + "\n" + text("inplace"),
			errs: []string{"recipe inplace: op@1.0.0 build 1 is"}, immutable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			d.against = against
			var b strings.Builder
			err := d.Run(t.Context(), &b, tc.dirs)
			if b.String() != tc.want {
				t.Errorf("Run wrote:\n%s\nwant:\n%s", b.String(), tc.want)
			}
			for _, e := range tc.errs {
				if err == nil || !strings.Contains(err.Error(), e) {
					t.Errorf("Run = %v, want an error containing %q", err, e)
				}
			}
			if len(tc.errs) == 0 && err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
			if got := errors.Is(err, builder.ErrImmutable); got != tc.immutable {
				t.Errorf("errors.Is(err, builder.ErrImmutable) = %v, want %v", got, tc.immutable)
			}
		})
	}
}
