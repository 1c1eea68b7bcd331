package render

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
)

// helmSplit is what Helm reads from a rendered stream, in its order.
func helmSplit(s string) []string {
	m := releaseutil.SplitManifests(s)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var out []string
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

var splitCases = []string{
	"",
	"---",
	"a: 1",
	"---\na: 1\n---\nb: 2\n",
	"a: 1\n---\n---\nb: 2",
	"a: 1\n---\n\n---\nb: 2",      // the second --- is eaten by the first separator's whitespace
	"a: 1 \t\n---  \n  b: 2",      // whitespace around a separator
	"a: 1\n---\v\n---\nb: 2",      // \v is not \s: an empty document is counted
	"a: 1\n--- # comment\nb: 2",   // text after --- starts the next document
	"a: 1\n----\nb: 2",            // four dashes: "-" starts the next document
	"a: 1\nx: ---\n  ---\nb: 2",   // --- not at a line start
	"\n\n  ---\na: 1\n---\n",      // leading whitespace, trailing separator
	"a: |\n  x\n---\n---\n---\nb", // runs of separators
	"a: 1\r\n---\r\nb: 2\r\n",     // CRLF
	"---a\n---b",
	"a\u00a0\n---\u00a0\nb", // non-ASCII space: trimmed, not eaten
}

// TestSplitManifests: splitManifests gives what Helm's SplitManifests does.
func TestSplitManifests(t *testing.T) {
	for i, s := range splitCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got, want := splitManifests(s), helmSplit(s); !slices.Equal(got, want) {
				t.Errorf("splitManifests(%q) = %q, want %q as Helm splits it", s, got, want)
			}
		})
	}
}

// FuzzSplitManifests checks splitManifests against Helm's SplitManifests.
func FuzzSplitManifests(f *testing.F) {
	for _, s := range splitCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := splitManifests(s), helmSplit(s); !slices.Equal(got, want) {
			t.Fatalf("splitManifests(%q) = %q, want %q as Helm splits it", s, got, want)
		}
	})
}
