package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/site"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/trust"
)

// Pages is how the catalogs of a site's suites are kept saying which
// suite holds which build: each suite's catalog is its own, at
// <site>/<suite>/ beside its index, and on its package pages every version
// carries a badge per suite holding that build or having withdrawn it.
// Publish (into the first suite), promote (into a later one) and withdraw
// (from every suite) change what suites hold; each passes Holdings to
// the publisher that writes its suite, then calls Refresh for the others.
type Pages struct {
	// Site holds <suite>/index.yaml for every suite.
	Site   string
	Config *Config
	// Signers are the index keys: each suite's index is verified with
	// them, as publish verifies its base, before its pages are written.
	Signers []trust.Signer
	// Root and Title are publish's WithRoot and WithTitle: the catalog's
	// Repository snippet pins the root's keys, and its title.
	Root, Title string
	// Now is the time indexes are checked at.
	Now time.Time
	// Stderr gets warnings (a suite whose index does not verify).
	Stderr io.Writer
}

// Holdings reads every suite's index under the site, verified, and
// returns what each holds and withdrew, for the catalog of suite this. A
// suite whose index does not exist yet is simply empty; one that does
// not verify is left out with a warning (its badges are not shown), so
// one broken suite does not stop a publish into another.
func (pg *Pages) Holdings(ctx context.Context, this string) (*site.Suites, error) {
	s := &site.Suites{This: this, Names: pg.Config.Names(), List: pg.Config.RootSuite != ""}
	compat, err := site.ListMatrices(pg.Site)
	if err != nil {
		return nil, err
	}
	s.Compat = compat
	for _, name := range s.Names {
		if name == this {
			continue
		}
		pub, err := siteread.ReadIndexAt(ctx, filepath.Join(pg.Site, name), trust.SignedBy(pg.Signers...), pg.Now)
		var ve *trust.VerificationError
		switch {
		case errors.Is(err, siteread.ErrNotFound):
			continue
		case errors.As(err, &ve):
			pg.warnf("suite %s: %v; its pages and the other suites' do not say what it holds until it verifies", name, err)
			continue
		case err != nil:
			return nil, fmt.Errorf("suite %s: %w", name, err)
		}
		s.Add(name, pub.Verified.Index)
	}
	return s, nil
}

// Refresh rewrites the pages of the packages named in every suite but
// skip (the one just written, whose pages are new), with fresh Holdings;
// the indexes are not re-signed. It returns the suites whose pages it
// rewrote.
func (pg *Pages) Refresh(ctx context.Context, skip string, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	var done []string
	for _, name := range pg.Config.Names() {
		if name == skip {
			continue
		}
		dir := filepath.Join(pg.Site, name)
		if _, err := os.Stat(filepath.Join(dir, sitelayout.IndexFile)); err != nil {
			continue
		}
		h, err := pg.Holdings(ctx, name)
		if err != nil {
			return done, err
		}
		p, err := publish.New(pg.options(dir, h)...)
		if err != nil {
			return done, err
		}
		found, err := p.Recatalog(ctx, names)
		if err != nil {
			return done, fmt.Errorf("suite %s: %w", name, err)
		}
		if found {
			done = append(done, name)
		}
	}
	return done, nil
}

// options are the publish options that write the catalog of the suite in
// dir as pg's: the site, signers, root, title and holdings h (nil for a
// site without suites).
func (pg *Pages) options(dir string, h *site.Suites) []publish.Option {
	opts := []publish.Option{publish.WithSite(dir), publish.WithSigners(pg.Signers...), publish.WithRoot(pg.Root), publish.WithTitle(pg.Title)}
	if h != nil {
		opts = append(opts, publish.WithSuites(h))
	}
	if pg.Stderr != nil {
		opts = append(opts, publish.WithOutput(io.Discard, pg.Stderr))
	}
	return opts
}

func (pg *Pages) warnf(format string, args ...any) {
	if pg.Stderr != nil {
		fmt.Fprintf(pg.Stderr, "warning: "+format+"\n", args...)
	}
}
