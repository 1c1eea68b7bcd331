package index

import (
	"errors"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/yamlscan"
)

// TestReaderPanicIsAnError injects a panic (yamlscan.TestHook) into the goroutines
// that read and write packages, on the parallel and the sequential paths,
// and checks that each is an error naming the line, not a crash (through
// Verify it is a refusal of index.yaml: trust's TestVerifyOrder).
func TestReaderPanicIsAnError(t *testing.T) {
	defer func(n int) { parallelMinBytes = n }(parallelMinBytes)
	defer func() { yamlscan.TestHook = nil }()
	x := realisticIndex(20, 3)
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		minBytes int
	}{
		{"parallel", 1},
		{"sequential", 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parallelMinBytes = tc.minBytes
			yamlscan.TestHook = func(name string) {
				if name == "package-0013" {
					panic("injected")
				}
			}
			defer func() { yamlscan.TestHook = nil }()
			_, err := ParseIndex(data)
			var pe *yamlscan.PanicError
			if !errors.As(err, &pe) || pe.Line == 0 || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("ParseIndex with a panic = %v, want a *yamlscan.PanicError naming its line", err)
			}
			// The line is where package-0013 starts.
			want := 1 + strings.Count(string(data[:strings.Index(string(data), "\n  package-0013:")+1]), "\n")
			if pe.Line != want {
				t.Errorf("panic reported at line %d, package-0013 starts on line %d", pe.Line, want)
			}
			if _, err := x.Marshal(); !errors.As(err, &pe) {
				t.Fatalf("Marshal with a panic = %v, want a *yamlscan.PanicError", err)
			}
			yamlscan.TestHook = nil
			if _, err := ParseIndex(data); err != nil {
				t.Fatalf("without the panic: %v", err)
			}
		})
	}
}

// TestParallelRecovers: a panic in one of parallel's functions is the
// error of that index, and the others still run.
func TestParallelRecovers(t *testing.T) {
	ran := make([]bool, 8)
	err := parallel(8, func(i int) error {
		ran[i] = true
		if i == 5 {
			var m map[string]int
			//lint:ignore SA5000 the nil map write is the runtime panic this test needs.
			m["x"] = 1
		}
		return nil
	})
	var pe *yamlscan.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "nil map") {
		t.Fatalf("parallel with a panic = %v, want a *yamlscan.PanicError", err)
	}
	for i, ok := range ran {
		if !ok {
			t.Errorf("f(%d) did not run", i)
		}
	}
}
