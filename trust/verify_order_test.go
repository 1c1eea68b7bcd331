package trust

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/yamlscan"
)

// TestVerifyOrder: nothing of an index is read, used or reported before
// its signature passes. The same bytes — garbage, an index with fields
// kbuild does not know (warnings), one whose reading panics, one with a
// spec that does not match its digest — are refused as not signed with a
// bad signature, the parser never having run (yamlscan.TestHook counts the
// packages it reads), and only with a good signature for what they are.
func TestVerifyOrder(t *testing.T) {
	defer func() { yamlscan.TestHook = nil }()
	k := newTestKeys(t)
	trust := &Trust{IndexKeys: pubs(k.index)}
	now := time.Unix(1791633600, 0).Add(time.Hour)
	x := realisticIndex(6, 2)
	good, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	withUnknown := strings.Replace(string(good), "kind: RepositoryIndex\n", "kind: RepositoryIndex\nmirror: https://mirror.example\n", 1)
	tampered := strings.Replace(string(good), "name: operator\n", "name: operator-evil\n", 1)
	for _, tc := range []struct {
		name  string
		data  string
		panic bool
		// signed is the outcome with a good signature: the kind of
		// refusal (nil: accepted) and a part of the message or warning.
		signed error
		want   string
	}{
		{"garbage", "packages: [" + strings.Repeat("{", 1000), false, ErrMalformed, "index.yaml: "},
		{"unknown field", withUnknown, false, nil, "field mirror is not known to kbuild"},
		{"reader panics", string(good), true, ErrMalformed, "internal error while reading or writing YAML"},
		{"digest mismatch", tampered, false, ErrDigest, "spec does not match its digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var read atomic.Int32
			yamlscan.TestHook = func(string) {
				read.Add(1)
				if tc.panic {
					panic("injected")
				}
			}
			defer func() { yamlscan.TestHook = nil }()
			data := []byte(tc.data)
			for _, bad := range [][]byte{nil, sigFile(t, []byte("other bytes"), k.index), sigFile(t, data, k.stranger)} {
				v, err := Verify(data, bad, trust, VerifyOptions{Now: now})
				if !errors.Is(err, ErrNotSigned) || v != nil {
					t.Fatalf("bad signature: Verify = %v, %v; want only ErrNotSigned", v, err)
				}
			}
			// Merging over it: nothing reaches the builder or each.
			for _, b := range []*index.Builder{index.NewBuilder(), index.NewBuilder(index.Compact())} {
				each := func(string, *index.IndexPackage) error {
					t.Fatal("a package was given to each before the signature passed")
					return nil
				}
				if v, err := AddVerifiedFunc(b, data, sigFile(t, data, k.stranger), trust, VerifyOptions{Now: now}, each); !errors.Is(err, ErrNotSigned) || v != nil {
					t.Fatalf("bad signature: AddVerifiedFunc = %v, %v; want only ErrNotSigned", v, err)
				}
				if p, n := b.Counts(); p != 0 || n != 0 {
					t.Fatalf("bad signature: the builder holds %d packages, %d versions", p, n)
				}
			}
			if n := read.Load(); n != 0 {
				t.Fatalf("%d packages were read before the signature was refused", n)
			}
			v, err := Verify(data, sigFile(t, data, k.index), trust, VerifyOptions{Now: now})
			switch {
			case tc.signed == nil && err != nil:
				t.Fatalf("good signature: Verify = %v", err)
			case tc.signed == nil && !strings.Contains(strings.Join(v.Warnings, "\n"), tc.want):
				t.Fatalf("good signature: warnings %q, want one containing %q", v.Warnings, tc.want)
			case tc.signed != nil && (!errors.Is(err, tc.signed) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("good signature: Verify = %v, want %v containing %q", err, tc.signed, tc.want)
			}
			if tc.data != "packages: ["+strings.Repeat("{", 1000) && read.Load() == 0 {
				t.Fatal("with a good signature the packages were not read")
			}
		})
	}
}
