package myredis

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (and the size, not the times) to the disk, as Redis's
// redis_fsync does on Linux. The raw-conn call keeps f open during the syscall.
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
