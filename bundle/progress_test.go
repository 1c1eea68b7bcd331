package bundle

import (
	"bytes"
	"testing"
)

// TestProgressTo: a bar on a terminal, a line per artifact in CI.
func TestProgressTo(t *testing.T) {
	steps := []Progress{
		{Artifact: "quay.io/a@sha256:1", Done: 0, Total: 4 << 20},
		{Artifact: "quay.io/a@sha256:1", Done: 1 << 20, Total: 4 << 20},
		{Artifact: "quay.io/b@sha256:2", Done: 2 << 20, Total: 4 << 20},
		{Done: 4 << 20, Total: 4 << 20},
	}
	cases := []struct {
		name string
		tty  bool
		want string
	}{
		{"terminal: a bar redrawn in place", true,
			"\r[                         ]   0% 0 B / 4.0 MiB quay.io/a@sha256:1                                " +
				"\r[######                   ]  25% 1.0 MiB / 4.0 MiB quay.io/a@sha256:1                                " +
				"\r[############             ]  50% 2.0 MiB / 4.0 MiB quay.io/b@sha256:2                                " +
				"\r[#########################] 100% 4.0 MiB / 4.0 MiB                                                   \n"},
		{"CI: a line per artifact", false,
			"copying quay.io/a@sha256:1 (0 B of 4.0 MiB done)\ncopying quay.io/b@sha256:2 (2.0 MiB of 4.0 MiB done)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := ProgressTo(&buf, tc.tty)
			for _, s := range steps {
				p(s)
			}
			if got := buf.String(); got != tc.want {
				t.Errorf("progress =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
