package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/recipe"
)

// reporter prints recipe problems for people, and under GitHub Actions
// also as workflow annotations so they show on the pull request's files.
type reporter struct {
	env *Env
}

func (r *reporter) github() bool { return r.env.Getenv("GITHUB_ACTIONS") == "true" }

// problem prints one problem of file, indented under the recipe's line.
func (r *reporter) problem(file string, p recipe.Problem) {
	fmt.Fprintf(r.env.Stdout, "  %s: %s\n", p.Severity, p)
	if r.github() {
		loc := "file=" + file
		if p.Line > 0 {
			loc += fmt.Sprintf(",line=%d", p.Line)
		}
		msg := p.Message
		if p.Field != "" {
			msg = p.Field + ": " + msg
		}
		fmt.Fprintf(r.env.Stdout, "::%s %s::%s\n", p.Severity, loc, escapeAnnotation(msg))
	}
}

// failure prints a recipe's failure: its problems when it has them, else
// the error.
func (r *reporter) failure(file string, err error) {
	var pe *recipe.ProblemsError
	if errors.As(err, &pe) {
		for _, p := range pe.Problems {
			r.problem(pe.File, p)
		}
		return
	}
	r.problem(file, recipe.Problem{Message: withHint(err).Error()})
}

// builds prints the results of builder.Build and, when some recipes failed,
// each failure, then "N of M recipes failed" and suffix; it returns the
// error to end the command with. display maps a recipe directory to how it
// is shown.
func (r *reporter) builds(results []*builder.Result, err error, display func(string) string, suffix string) error {
	for _, res := range results {
		printResult(r.env, res)
		for _, w := range res.Warnings {
			r.problem(res.RecipeFile, w)
		}
	}
	var be *builder.BuildErrors
	if !errors.As(err, &be) {
		return err
	}
	for _, fe := range be.Failed {
		fmt.Fprintf(r.env.Stdout, "%s: FAILED\n", display(fe.Dir))
		r.failure(display(filepath.Join(fe.Dir, builder.RecipeFile)), fe.Err)
	}
	fmt.Fprintf(r.env.Stdout, "%s%s\n", be, suffix)
	errs := make([]error, len(be.Failed))
	for i, fe := range be.Failed {
		errs[i] = fe.Err
	}
	return &exitError{sharedExitCode(errs)}
}

// escapeAnnotation escapes a message for a workflow command.
func escapeAnnotation(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}
