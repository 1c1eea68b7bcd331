package review

import (
	"math/rand"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{name: "equal", a: "x\ny\n", b: "x\ny\n", want: ""},
		{name: "both empty", a: "", b: "", want: ""},
		{
			name: "added file",
			a:    "",
			b:    "a\nb\n",
			want: "--- A\n+++ B\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		{
			name: "removed file",
			a:    "a\n",
			b:    "",
			want: "--- A\n+++ B\n@@ -1 +0,0 @@\n-a\n",
		},
		{
			name: "one line changed in the middle",
			a:    "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			b:    "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			want: "--- A\n+++ B\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
		},
		{
			name: "two changes far apart make two hunks",
			a:    "a\n1\n2\n3\n4\n5\n6\n7\n8\nz\n",
			b:    "A\n1\n2\n3\n4\n5\n6\n7\n8\nZ\n",
			want: "--- A\n+++ B\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-z\n+Z\n",
		},
		{
			name: "two changes close together make one hunk",
			a:    "a\n1\n2\n3\n4\n5\n6\nz\n",
			b:    "A\n1\n2\n3\n4\n5\n6\nZ\n",
			want: "--- A\n+++ B\n@@ -1,8 +1,8 @@\n-a\n+A\n 1\n 2\n 3\n 4\n 5\n 6\n-z\n+Z\n",
		},
		{
			name: "insertion at the end",
			a:    "a\nb\n",
			b:    "a\nb\nc\n",
			want: "--- A\n+++ B\n@@ -1,2 +1,3 @@\n a\n b\n+c\n",
		},
		{
			name: "no final newline is the same text",
			a:    "a\nb",
			b:    "a\nb\n",
			want: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := unified("A", "B", tc.a, tc.b); got != tc.want {
				t.Errorf("unified(%q, %q) =\n%s\nwant\n%s", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// lcs returns the length of a longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] > cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// TestDiffLinesMinimal checks on random texts that the edit script turns a
// into b and keeps a longest common subsequence (is a shortest script).
func TestDiffLinesMinimal(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	gen := func() []string {
		n := rng.Intn(30)
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + rng.Intn(4)))
		}
		return out
	}
	for i := 0; i < 2000; i++ {
		a, b := gen(), gen()
		edits := diffLines(a, b)
		var gotA, gotB []string
		kept := 0
		for _, e := range edits {
			if e.op != '+' {
				gotA = append(gotA, e.line)
			}
			if e.op != '-' {
				gotB = append(gotB, e.line)
			}
			if e.op == ' ' {
				kept++
			}
		}
		if strings.Join(gotA, ",") != strings.Join(a, ",") || strings.Join(gotB, ",") != strings.Join(b, ",") {
			t.Fatalf("diffLines(%v, %v) = %v: does not turn a into b", a, b, edits)
		}
		if want := lcs(a, b); kept != want {
			t.Fatalf("diffLines(%v, %v) keeps %d lines, want %d (not minimal)", a, b, kept, want)
		}
	}
}

// TestDiffLinesLimit checks that texts differing in more lines than the
// limit still give a correct script.
func TestDiffLinesLimit(t *testing.T) {
	var a, b []string
	for i := 0; i < maxEditDistance; i++ {
		a = append(a, "a", "same")
		b = append(b, "b", "same")
	}
	edits := diffLines(a, b)
	var gotA, gotB int
	for _, e := range edits {
		if e.op != '+' {
			gotA++
		}
		if e.op != '-' {
			gotB++
		}
	}
	if gotA != len(a) || gotB != len(b) {
		t.Fatalf("diffLines over the limit covers %d and %d lines, want %d and %d", gotA, gotB, len(a), len(b))
	}
}
