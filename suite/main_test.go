package suite

import (
	"os"
	"testing"

	"kbuild.dev/kbuild/builder/render"
)

// TestMain makes the test binary a rendering worker when render starts it
// as one.
func TestMain(m *testing.M) {
	render.WorkerMain()
	os.Exit(m.Run())
}
