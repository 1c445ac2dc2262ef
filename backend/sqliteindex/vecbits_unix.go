//go:build unix

package sqliteindex

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, released when f is closed: the
// writers of several processes append to a sign-bit file one at a time.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// mapFile maps the first size bytes of f read-only. populate: its page
// table filled at once where the system can (MAP_POPULATE), for a file
// scanned from end to end (at 1M × 1536 a call took 8% less CPU than
// faulting every page in); a file read at a few thousand places is faulted
// in where it is read instead, as filling the table of the whole of it
// costs more than those faults.
func mapFile(f *os.File, size int, populate bool) ([]byte, error) {
	flags := syscall.MAP_SHARED
	if populate {
		flags |= mapPopulate
	}
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, flags)
}

func unmapFile(b []byte) { _ = syscall.Munmap(b) }
