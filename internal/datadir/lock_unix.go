//go:build unix

package datadir

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive (or, with shared, a shared) flock on f
// without waiting; false means another open file description holds a lock
// that excludes it.
func tryLock(f *os.File, shared bool) (bool, error) {
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return false, err
		}
	}
}
