package trust

import (
	"errors"
	"kbuild.dev/kbuild/index"
)

// AddBase adds every version of a verified base index to b (delegated
// versions that lacked signatures included), as Builder.AddPublished
// does. Call it before Add.
func AddBase(b *index.Builder, base *Verified) error {
	if base == nil || base.all == nil {
		return errors.New("the base index must be one that Verify accepted")
	}
	if err := base.checkMergeable(); err != nil {
		return err
	}
	return b.AddPublished(base.all, base.Withdrawn)
}

// AddVerifiedFunc verifies a base index as Verify does and adds every
// version of it to b (delegated versions that lack signatures included),
// as AddBase does. A compact Builder adds each package as it is decoded and
// keeps nothing of the parsed index (Verified.Index is then nil), so
// publishing over an index of 100,000 versions does not hold it twice. On
// error the Builder may hold part of the base: Reset it or drop it.
//
// It also gives each package of the base to each (when not nil) as it is
// added, possibly from several goroutines at once: a caller that needs something of every package (a catalog)
// takes it then instead of reading the index again. In compact mode the
// package must not be referenced after each returns.
func AddVerifiedFunc(b *index.Builder, indexBytes, sigBytes []byte, trust *Trust, opts VerifyOptions, each func(name string, p *index.IndexPackage) error) (*Verified, error) {
	if !b.IsCompact() {
		v, err := Verify(indexBytes, sigBytes, trust, opts)
		if err != nil {
			return nil, err
		}
		if each != nil {
			for name, p := range v.all.Packages {
				if err := each(name, p); err != nil {
					return nil, err
				}
			}
		}
		return v, AddBase(b, v)
	}
	opts.DiscardIndex = true
	v, err := verify(indexBytes, sigBytes, trust, opts, func(name string, p *index.IndexPackage) error {
		if each != nil {
			if err := each(name, p); err != nil {
				return err
			}
		}
		return b.AddPublishedPackage(name, p)
	})
	if err != nil {
		return nil, err
	}
	if err := v.checkMergeable(); err != nil {
		return nil, err
	}
	b.SetPublished(v.Generated, v.Withdrawn)
	return v, nil
}
