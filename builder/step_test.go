package builder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/recipe"
)

// TestStepTimeoutKillsGroup: a step plugin that outlives its timeout and
// leaves a child holding its stderr ends the step at the timeout (its
// process group is killed and the pipes are not waited for).
func TestStepTimeoutKillsGroup(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\nsleep 600 &\necho started >&2\nsleep 600\n"
	if err := os.WriteFile(filepath.Join(bin, "kubepkg-step-hang"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	done := make(chan error, 1)
	go func() {
		done <- runStep(context.Background(), t.TempDir(), t.TempDir(), recipe.Step{Plugin: "hang"}, 500*time.Millisecond)
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "did not finish within 500ms") {
			t.Fatalf("runStep(hanging plugin) = %v, want a timeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("runStep still waits for the plugin's pipes a minute after its timeout")
	}
}
