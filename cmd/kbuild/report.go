package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/recipe"
)

// github says whether kbuild runs under GitHub Actions, where problems
// are also workflow annotations.
func github(env *Env) bool { return env.Getenv("GITHUB_ACTIONS") == "true" }

// reportBuilds prints the results of builder.Build and, when some recipes
// failed, each failure (its problems, or the error), then "N of M recipes
// failed" and suffix; it returns the error to end the command with.
// display maps a recipe directory to how it is shown.
func reportBuilds(env *Env, results []*builder.Result, err error, display func(string) string, suffix string) error {
	for _, res := range results {
		res.WriteText(env.Stdout, env.Stderr, github(env))
	}
	var be *builder.BuildErrors
	if !errors.As(err, &be) {
		return err
	}
	errs := make([]error, len(be.Failed))
	for i, fe := range be.Failed {
		fmt.Fprintf(env.Stdout, "%s: FAILED\n", display(fe.Dir))
		var pe *recipe.ProblemsError
		if errors.As(fe.Err, &pe) {
			for _, p := range pe.Problems {
				p.WriteText(env.Stdout, pe.File, github(env))
			}
		} else {
			recipe.Problem{Message: withHint(fe.Err).Error()}.WriteText(env.Stdout, display(filepath.Join(fe.Dir, builder.RecipeFile)), github(env))
		}
		errs[i] = fe.Err
	}
	fmt.Fprintf(env.Stdout, "%s%s\n", be, suffix)
	return &exitError{Code: sharedExitCode(errs)}
}
