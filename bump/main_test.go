package bump

import (
	"os"
	"testing"

	chartrender "kbuild.dev/kbuild/builder/render"
)

// TestMain makes the test binary a rendering worker when render starts it
// as one.
func TestMain(m *testing.M) {
	chartrender.WorkerMain()
	os.Exit(m.Run())
}
