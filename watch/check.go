package watch

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"kbuild.dev/kbuild/recipe"
)

// Target is one recipe to check: its directory, its decoded recipe and
// its watch rule.
type Target struct {
	Dir    string
	Recipe *recipe.Recipe
	Rule   *Rule
	// Err is a failure to load the recipe or its rule; Check reports it.
	Err error
}

// Report is what Check found for one recipe.
type Report struct {
	// Recipe is the recipe's directory.
	Recipe string `json:"recipe"`
	// Package is the package name ("" when the recipe did not load).
	Package string `json:"package,omitempty"`
	// Upstreams has one status per upstream: the package's first, then
	// those under also: by name.
	Upstreams []Status `json:"upstreams,omitempty"`
	// Error says why the recipe could not be checked.
	Error string `json:"error,omitempty"`
	// Unwatched is set when the recipe has no watch rule (Error says so).
	Unwatched bool `json:"unwatched,omitempty"`
}

// Outdated reports whether an upstream has a newer allowed version.
func (r Report) Outdated() bool {
	for _, s := range r.Upstreams {
		if s.Outdated {
			return true
		}
	}
	return false
}

// Status is one upstream of a recipe: the version the recipe has and the
// newest the rule allows.
type Status struct {
	// Name is "version" for the package's upstream, else its name under
	// also:.
	Name string `json:"name"`
	// Upstream describes where versions are listed.
	Upstream string `json:"upstream"`
	// Current is the recipe's version of it ("" when none is read).
	Current string `json:"current"`
	// Newest is the newest allowed version, NewestTag its name upstream
	// ("" when upstream lists none allowed).
	Newest    string `json:"newest"`
	NewestTag string `json:"newestTag,omitempty"`
	// Outdated is set when Newest is newer than Current.
	Outdated bool `json:"outdated"`
	// NotVersions and Refused count the names upstream lists that are not
	// versions, and the versions the rule does not allow.
	NotVersions int `json:"notVersions"`
	Refused     int `json:"refused"`
	// Error says why this upstream could not be checked.
	Error string `json:"error,omitempty"`
}

// PackageUpstream is the Status name of the package's upstream.
const PackageUpstream = "version"

// Check looks up every upstream of every target, at most jobs at once
// (0 for 16), each distinct upstream once, and returns one report per
// target in the order given.
func Check(ctx context.Context, l *Looker, targets []Target, jobs int) []Report {
	if jobs <= 0 {
		jobs = 16
	}
	memo := &lookups{l: l, sem: make(chan struct{}, jobs), m: map[string]*lookup{}}
	reports := make([]Report, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		reports[i] = Report{Recipe: t.Dir}
		if t.Err != nil {
			reports[i].Error = t.Err.Error()
			reports[i].Unwatched = errors.Is(t.Err, ErrNoRule)
			continue
		}
		reports[i].Package = t.Recipe.Metadata.Name
		names := append([]string{PackageUpstream}, sortedKeys(t.Rule.Also)...)
		reports[i].Upstreams = make([]Status, len(names))
		for j, n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				reports[i].Upstreams[j] = status(ctx, memo, t, n)
			}()
		}
	}
	wg.Wait()
	return reports
}

// status checks upstream name of t.
func status(ctx context.Context, memo *lookups, t Target, name string) Status {
	u := t.Rule.Upstream
	if name != PackageUpstream {
		u = t.Rule.Also[name]
	}
	st := Status{Name: name, Upstream: Describe(u)}
	p, err := compile(u.Versions)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	cur := t.Rule.CurrentTag(t.Recipe, name)
	if v := p.current(cur); v != nil {
		st.Current = v.String()
	} else {
		st.Current = cur
	}
	sel, err := memo.get(ctx, u)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.NotVersions, st.Refused = sel.NotVersions, sel.Refused
	if c, ok := sel.Newest(); ok {
		st.Newest, st.NewestTag = c.Version, c.Tag
		st.Outdated = behind(p, cur, c)
	}
	return st
}

// Behind reports whether sel, upstream name's look-up, lists an allowed
// version newer than the recipe's current one (CurrentTag, read with the
// upstream's policy). An upstream nothing in the recipe follows, or whose
// current version is not one, is never behind.
func (r *Rule) Behind(rec *recipe.Recipe, name string, sel Selection) bool {
	u, ok := r.Upstream, true
	if name != PackageUpstream {
		u, ok = r.Also[name]
	}
	c, newest := sel.Newest()
	if !ok || !newest {
		return false
	}
	p, err := compile(u.Versions)
	if err != nil {
		return false
	}
	return behind(p, r.CurrentTag(rec, name), c)
}

// behind reports whether c is newer than cur read with p.
func behind(p *policy, cur string, c Candidate) bool {
	curV := p.current(cur)
	return curV != nil && c.semver != nil && c.semver.GreaterThan(curV)
}

// CurrentTag returns the recipe's current version of upstream name: the
// recipe's spec.version for the package's upstream; for one under also:,
// the tag of the first image in spec.package.images that follows it, else
// the version in the constraint of the first requirement that follows it
// ("~1.66" reads 1.66). "" when nothing follows it.
func (r *Rule) CurrentTag(rec *recipe.Recipe, name string) string {
	if name == PackageUpstream {
		return rec.Spec.Version
	}
	for _, ir := range r.Images {
		if ir.From != name {
			continue
		}
		for _, ref := range rec.Spec.Package.Images {
			im, err := recipe.ParseImage(ref)
			if err != nil {
				continue
			}
			if ok, _ := path.Match(ir.Repository, im.Repository); ok {
				return im.Tag
			}
		}
	}
	for _, q := range r.Requires {
		if q.From != name {
			continue
		}
		for _, v := range rec.Spec.Package.Variants {
			for _, rq := range v.Requires {
				if rq.Package == q.Package {
					return strings.TrimLeft(rq.Version, "~^=<> ")
				}
			}
		}
	}
	return ""
}

// lookups runs each distinct upstream's look-up once, at most cap(sem)
// at a time.
type lookups struct {
	l   *Looker
	sem chan struct{}
	mu  sync.Mutex
	m   map[string]*lookup
}

type lookup struct {
	once sync.Once
	sel  Selection
	err  error
}

func (m *lookups) get(ctx context.Context, u Upstream) (Selection, error) {
	key := fmt.Sprintf("%s|%+v|%v", Describe(u), u.Versions, u.GitHub)
	m.mu.Lock()
	lk := m.m[key]
	if lk == nil {
		lk = &lookup{}
		m.m[key] = lk
	}
	m.mu.Unlock()
	lk.once.Do(func() {
		select {
		case m.sem <- struct{}{}:
		case <-ctx.Done():
			lk.err = ctx.Err()
			return
		}
		defer func() { <-m.sem }()
		lk.sel, lk.err = m.l.Lookup(ctx, u)
	})
	return lk.sel, lk.err
}
