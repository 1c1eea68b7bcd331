package review

import (
	"fmt"
	"strings"
)

// maxEditDistance bounds the work of the line diff: past this many inserted
// and deleted lines, the differing middle of the two texts is shown as
// removed and added whole. Such a diff is still correct, only not minimal,
// and it is truncated when printed anyway.
const maxEditDistance = 2000

// contextLines is the number of unchanged lines shown around each change.
const contextLines = 3

// edit is one line of an edit script: ' ' kept, '-' deleted from a, '+'
// inserted from b.
type edit struct {
	op   byte
	line string
}

// splitLines splits s into lines without their newlines. A final newline
// does not start another line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines returns a shortest edit script turning a into b (Myers' O(ND)
// algorithm), after taking off the common prefix and suffix.
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for _, l := range a[:pre] {
		out = append(out, edit{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{' ', l})
	}
	return out
}

// myers finds a shortest edit script from a to b. It keeps the furthest
// reaching x of every diagonal after each round d so that the path can be
// walked back; past maxEditDistance rounds it gives up and replaces a by b.
func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(a, b)
	}
	limit := min(n+m, maxEditDistance)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] holds v[k] for k in [-d, d] after round d, at index k+d.
	var trace [][]int
	end := -1
	for d := 0; d <= limit && end < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				end = d
			}
		}
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
	}
	if end < 0 {
		return replaceAll(a, b)
	}
	// Walk back from (n, m), collecting the script in reverse.
	var rev []edit
	x, y := n, m
	for d := end; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		// The edit moved from (px, py) down (an insertion) or right (a
		// deletion), then a snake of kept lines led to (x, y).
		midX := px
		if pk == k-1 {
			midX++
		}
		for x > midX {
			rev = append(rev, edit{' ', a[x-1]})
			x--
			y--
		}
		if pk == k+1 {
			rev = append(rev, edit{'+', b[y-1]})
		} else {
			rev = append(rev, edit{'-', a[x-1]})
		}
		x, y = px, px-pk
	}
	for x > 0 && y > 0 {
		rev = append(rev, edit{' ', a[x-1]})
		x--
		y--
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

func replaceAll(a, b []string) []edit {
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, edit{'-', l})
	}
	for _, l := range b {
		out = append(out, edit{'+', l})
	}
	return out
}

// unified returns the unified diff of texts a and b with the given file
// labels and contextLines of context, or "" when they are equal.
func unified(aLabel, bLabel, a, b string) string {
	edits := diffLines(splitLines(a), splitLines(b))
	changed := false
	for _, e := range edits {
		if e.op != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aLabel, bLabel)
	// aLine and bLine are the 0-based line numbers before edits[i].
	aLines, bLines := make([]int, len(edits)+1), make([]int, len(edits)+1)
	for i, e := range edits {
		aLines[i+1], bLines[i+1] = aLines[i], bLines[i]
		if e.op != '+' {
			aLines[i+1]++
		}
		if e.op != '-' {
			bLines[i+1]++
		}
	}
	for i := 0; i < len(edits); {
		if edits[i].op == ' ' {
			i++
			continue
		}
		// A hunk starts contextLines before the first change and ends
		// where more than 2*contextLines unchanged lines follow a change.
		start := max(0, i-contextLines)
		end := i
		for j := i; j < len(edits); j++ {
			if edits[j].op != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*contextLines {
				break
			}
		}
		stop := min(len(edits), end+contextLines)
		aStart, aCount := aLines[start], aLines[stop]-aLines[start]
		bStart, bCount := bLines[start], bLines[stop]-bLines[start]
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
		for _, e := range edits[start:stop] {
			sb.WriteByte(e.op)
			sb.WriteString(e.line)
			sb.WriteByte('\n')
		}
		i = stop
	}
	return sb.String()
}

// hunkRange formats a hunk's line range: 1-based start, and the count
// unless it is 1. An empty range names the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
