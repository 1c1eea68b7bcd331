package render

import (
	"os"
	"testing"
)

// TestMain makes the test binary a rendering worker when Render starts it
// as one.
func TestMain(m *testing.M) {
	WorkerMain()
	os.Exit(m.Run())
}
