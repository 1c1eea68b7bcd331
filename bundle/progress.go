package bundle

import (
	"fmt"
	"io"
	"strings"
)

// ProgressTo returns a WithProgress function that writes to w: on a
// terminal (tty) one bar redrawn in place, else one line per artifact,
// for CI logs.
func ProgressTo(w io.Writer, tty bool) func(Progress) {
	last := ""
	return func(p Progress) {
		if tty {
			pct := 100
			if p.Total > 0 {
				pct = int(p.Done * 100 / p.Total)
			}
			bar := strings.Repeat("#", pct/4) + strings.Repeat(" ", 25-pct/4)
			fmt.Fprintf(w, "\r[%s] %3d%% %s / %s %-50.50s", bar, pct, HumanBytes(p.Done), HumanBytes(p.Total), p.Artifact)
			if p.Artifact == "" {
				fmt.Fprintln(w)
			}
			return
		}
		if p.Artifact != "" && p.Artifact != last {
			last = p.Artifact
			fmt.Fprintf(w, "copying %s (%s of %s done)\n", p.Artifact, HumanBytes(p.Done), HumanBytes(p.Total))
		}
	}
}

// WriteText writes what Create bundled into file: one line per package
// (its version, build and why it is in) on w, then the totals on summary.
func (c *Contents) WriteText(w, summary io.Writer, file string) error {
	for _, p := range c.Packages {
		fmt.Fprintf(w, "%s %s build %d (%s)\n", p.Name, p.Version, p.Build, p.Reason)
	}
	var size int64
	for _, im := range c.Images {
		size += im.Size
	}
	_, err := fmt.Fprintf(summary, "wrote %s: %d packages, %d charts, %d images (%s of image data)\n", file, len(c.Packages), len(c.Charts), len(c.Images), HumanBytes(size))
	return err
}
