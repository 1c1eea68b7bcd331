package yamlscan

import (
	"errors"
	"strings"
	"testing"
)

// TestSkipValue skips the value of key "x" of each document, whatever its
// YAML, and reads the key after it: the reader must stop exactly at the
// end of the value, with the line count right.
func TestSkipValue(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int // of key "next"
	}{
		{"block mapping", "x:\n  a: 1\n  b:\n  - c\nnext: v\n", 5},
		{"block sequence at the key's column", "x:\n- a\n- b: 1\nnext: v\n", 4},
		{"flow mapping", "x: {a: 1, b: [2, 3]}\nnext: v\n", 2},
		{"flow over lines", "x: {a: 1,\n  b: [2,\n    3]}\nnext: v\n", 4},
		{"folded scalar", "x: >\n  folded\n\n  text\nnext: v\n", 5},
		{"tag", "x: !!str 12\nnext: v\n", 2},
		{"comments and blank lines inside", "x: [a,\n  # note\n\n  b]\n# after\nnext: v\n", 6},
		{"multi-line plain scalar", "x: a\n  b # c\nnext: v\n", 3},
		{"in a sequence entry", "list:\n- x: {a: 1}\n  next: v\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader([]byte(tc.doc), false)
			if err != nil {
				t.Fatal(err)
			}
			var next string
			line := 0
			var readKeys func(k string) error
			readKeys = func(k string) error {
				switch k {
				case "x":
					return r.SkipValue()
				case "next":
					line = r.Line()
					var err error
					next, err = r.ReadString(k)
					return err
				case "list":
					_, err := r.ReadSeq(func() error {
						_, err := r.ReadMap(readKeys)
						return err
					})
					return err
				}
				return r.Bailf("key %q", k)
			}
			if err := r.ReadRoot(readKeys); err != nil {
				t.Fatalf("%q: %v", tc.doc, err)
			}
			if next != "v" || line != tc.line {
				t.Errorf("%q: next = %q on line %d, want \"v\" on line %d", tc.doc, next, line, tc.line)
			}
		})
	}
}

// TestSkipValueRefuses: a value the slow path refuses is refused here too,
// as a *Bail at the key's line.
func TestSkipValueRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"alias", "a: z\nx: {p: &v [1], q: *v}\n", "anchors and aliases"},
		{"duplicate key", "a: z\nx:\n  p: {k: 1, k: 2}\n", `duplicate key "k"`},
		{"unterminated flow", "a: z\nx: [1, 2\nnext: v\n", "line 2"},
		{"flow continued at the key's column", "a: z\nx: [1,\n2]\n", "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader([]byte(tc.doc), false)
			if err != nil {
				t.Fatal(err)
			}
			err = r.ReadRoot(func(k string) error {
				if k == "x" {
					return r.SkipValue()
				}
				_, err := r.ReadString(k)
				return err
			})
			var bail *Bail
			if !errors.As(err, &bail) || bail.Line != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q: %v, want a *Bail on line 2 containing %q", tc.doc, err, tc.want)
			}
		})
	}
}

// TestRecover: a panic while reading is a *PanicError at the reader's line.
func TestRecover(t *testing.T) {
	r, err := NewReader([]byte("a: z\nb: 2\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	read := func() (err error) {
		defer Recover(&err, r)
		return r.ReadRoot(func(k string) error {
			if k == "b" {
				panic("injected")
			}
			_, err := r.ReadString(k)
			return err
		})
	}
	err = read()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), "line 2: internal error") || len(pe.Stack) == 0 {
		t.Fatalf("read with a panic = %v, want a *PanicError on line 2", err)
	}
}
