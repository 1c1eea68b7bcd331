//go:build unix

package index

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system, all threads) the process has
// used: on a shared machine a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
