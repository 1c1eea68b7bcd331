package watch

import (
	"errors"
	"fmt"
	"path"
	"slices"

	"kbuild.dev/kbuild/recipe"
)

// Against checks the rule against the recipe it sits beside: every url,
// chart and git source is followed or kept, every source the rule names
// exists and is of the kind the rule needs, every image rule matches an
// image of spec.package.images, and every requirement rule a requirement.
// file names the rule in errors.
func (r *Rule) Against(file string, rec *recipe.Recipe) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{file}, args...)...))
	}
	for _, name := range sortedKeys(rec.Spec.Sources) {
		src := rec.Spec.Sources[name]
		_, followed := r.Sources[name]
		pinned := src.URL != "" || src.Chart != nil || src.Git != nil
		if pinned && !followed && !slices.Contains(r.Keep, name) {
			bad("source %s: neither followed (sources:) nor kept (keep:); say which", name)
		}
	}
	for _, name := range sortedKeys(r.Sources) {
		sr := r.Sources[name]
		src, ok := rec.Spec.Sources[name]
		switch {
		case !ok:
			bad("sources.%s: the recipe has no source %s", name, name)
		case (sr.URL != "" || sr.Asset != "") && src.URL == "":
			bad("sources.%s: url and asset follow a url source", name)
		case sr.GitTag != "" && src.Git == nil:
			bad("sources.%s: gitTag follows a git source", name)
		case sr.Chart && src.Chart == nil:
			bad("sources.%s: chart follows a chart source", name)
		}
	}
	for _, name := range r.Keep {
		if _, ok := rec.Spec.Sources[name]; !ok {
			bad("keep: the recipe has no source %s", name)
		}
	}
	for i, ir := range r.Images {
		matched := false
		for _, ref := range rec.Spec.Package.Images {
			if im, err := recipe.ParseImage(ref); err == nil {
				if ok, _ := path.Match(ir.Repository, im.Repository); ok {
					matched = true
				}
			}
		}
		if !matched {
			bad("images.%d: %s matches no image of spec.package.images", i, ir.Repository)
		}
	}
	for i, q := range r.Requires {
		found := false
		for _, v := range rec.Spec.Package.Variants {
			for _, rq := range v.Requires {
				found = found || rq.Package == q.Package
			}
		}
		if !found {
			bad("requires.%d: no variant requires package %s", i, q.Package)
		}
	}
	return errors.Join(errs...)
}
