//go:build !unix

package index

import "time"

// cpuTime is 0 where getrusage is missing.
func cpuTime() time.Duration { return 0 }
