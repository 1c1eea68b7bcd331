package patches

import (
	"errors"
	"fmt"

	"kbuild.dev/kbuild/recipe"
)

// ErrNoMatch is wrapped by the errors of Exclude and Apply for a selector that
// matches no object; it is almost always a typo in the kind or the name.
var ErrNoMatch = errors.New("matches no object")

// Exclude returns the objects that match none of the selectors, in their
// order; objs itself is not changed. A selector matches on kind and name, an
// empty field matching any. A selector with neither field, or one that matches
// nothing, is an error naming it (all such selectors are reported together).
func Exclude(objs []*Object, sel []recipe.Selector) ([]*Object, error) {
	for i, s := range sel {
		if s.Kind == "" && s.Name == "" {
			return nil, fmt.Errorf("exclude[%d]: neither kind nor name is set; say what to drop, e.g. {kind: Namespace}", i)
		}
	}
	used := make([]bool, len(sel))
	kept := make([]*Object, 0, len(objs))
	for _, o := range objs {
		drop := false
		for i, s := range sel {
			if o.matches(s.Kind, s.Name) {
				used[i], drop = true, true
			}
		}
		if !drop {
			kept = append(kept, o)
		}
	}
	var errs []error
	for i, s := range sel {
		if !used[i] {
			errs = append(errs, fmt.Errorf("exclude[%d] %s: %w; %s", i, selector(s.Kind, s.Name), ErrNoMatch, present(objs, s.Kind)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return kept, nil
}
