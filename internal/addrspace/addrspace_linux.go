package addrspace

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// now reads RLIMIT_AS and VmSize from /proc/self/status.
func now() Room {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur > 1<<62 { // RLIM_INFINITY is all ones
		return Room{}
	}
	mapped, ok := vmSize()
	if !ok {
		return Room{}
	}
	return Room{Limited: true, Limit: int64(rl.Cur), Mapped: mapped}
}

// vmSize returns the process's virtual size, VmSize in /proc/self/status.
func vmSize() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmSize:"))
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
