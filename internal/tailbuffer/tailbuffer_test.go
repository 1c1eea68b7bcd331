package tailbuffer

import (
	"strings"
	"sync"
	"testing"
)

func TestBuffer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		writes []string
		want   string
	}{
		{name: "short", n: 10, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "exactly n", n: 6, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "the end kept", n: 4, writes: []string{"abc", "def", "gh"}, want: "efgh"},
		{name: "one large write", n: 4, writes: []string{"abcdefghij"}, want: "ghij"},
		{name: "from a line break near the start", n: 8, writes: []string{"first line\nend", "ing\n"}, want: "ending\n"},
		{name: "a line break late is not followed", n: 8, writes: []string{"xxxxxxxxxabcdef\ng"}, want: "abcdef\ng"},
		{name: "one large write from a line break", n: 8, writes: []string{"xxxxxxxab\ncdefg"}, want: "cdefg"},
		{name: "nothing cut, the line break kept", n: 8, writes: []string{"ab\ncdefg"}, want: "ab\ncdefg"},
		{name: "nothing", n: 8, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.n)
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v, want %d, nil", w, n, err, len(w))
				}
			}
			if got := b.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBufferBounded checks that a Buffer holds at most twice its size
// however much is written, from several goroutines at once.
func TestBufferBounded(t *testing.T) {
	b := New(100)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				b.Write([]byte(strings.Repeat("x", 37) + "\n"))
			}
		})
	}
	wg.Wait()
	if len(b.b) > 200 {
		t.Errorf("the buffer holds %d bytes, want at most 200", len(b.b))
	}
	if got := b.String(); len(got) > 100 || !strings.HasSuffix(got, "x\n") {
		t.Errorf("String() = %q, want at most 100 bytes ending in x\\n", got)
	}
}
