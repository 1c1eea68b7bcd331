package yamlbound

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// laughs returns a billion-laughs document with n levels of ten aliases.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x]\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		wantErr   bool
	}{
		{"plain", "a: [1, 2, {b: c}]\n", false},
		{"few aliases", "a: &x {b: c}\nd: *x\ne: *x\n", false},
		{"empty values", strings.Repeat("k:\n", 1), false},
		{"billion laughs", laughs(9), true},
		{"aliases of a long string", "a: &a " + strings.Repeat("x", 20000) + "\nb: [" + strings.Repeat("*a,", 100) + "*a]\n", true},
		{"long strings", "a: " + strings.Repeat("x", 20000) + "\nb: \"" + strings.Repeat("\\x41", 5000) + "\"\n", false},
		{"deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.doc), &doc); err != nil {
				t.Fatal(err)
			}
			err := Check(&doc, len(tc.doc))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Check = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrExpansion) {
				t.Errorf("Check = %v, want it to wrap ErrExpansion", err)
			}
		})
	}
}
