//go:build unix

package publish

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockSite takes the publish lock of the site directory dir, creating dir
// when needed, without waiting: a second publish to the same directory
// fails at once rather than interleaving its files with the first's. The
// lock is released when the process ends, however it ends. The lock file
// (LockPath) is outside the site, so it is never deployed with it.
func lockSite(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path, err := LockPath(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another publish is writing %s (it holds %s); nothing was published: run again when it has finished", dir, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// inode names the file fi describes by device and inode, "" where there
// are none.
func inode(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("inode %d:%d, ", st.Dev, st.Ino)
	}
	return ""
}
