package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"kbuild.dev/kbuild/bundle"
)

// progressBar draws a bar when stderr is a terminal and prints one line
// per artifact elsewhere (CI logs).
func progressBar(env *Env) func(bundle.Progress) {
	tty := false
	if f, ok := env.Stderr.(*os.File); ok && env.Getenv("CI") == "" {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return progressTo(env.Stderr, tty)
}

// progressTo reports progress on w: a bar redrawn in place on a terminal,
// else a line when the artifact changes.
func progressTo(w io.Writer, tty bool) func(bundle.Progress) {
	last := ""
	return func(p bundle.Progress) {
		if tty {
			pct := 100
			if p.Total > 0 {
				pct = int(p.Done * 100 / p.Total)
			}
			bar := strings.Repeat("#", pct/4) + strings.Repeat(" ", 25-pct/4)
			fmt.Fprintf(w, "\r[%s] %3d%% %s / %s %-50.50s", bar, pct, bundle.HumanBytes(p.Done), bundle.HumanBytes(p.Total), p.Artifact)
			if p.Artifact == "" {
				fmt.Fprintln(w)
			}
			return
		}
		if p.Artifact != "" && p.Artifact != last {
			last = p.Artifact
			fmt.Fprintf(w, "copying %s (%s of %s done)\n", p.Artifact, bundle.HumanBytes(p.Done), bundle.HumanBytes(p.Total))
		}
	}
}
