//go:build unix

package sqliteindex

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, released when f is closed: the
// writers of several processes append to a sign-bit file one at a time.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// mapFile maps the first size bytes of f read-only.
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmapFile(b []byte) { _ = syscall.Munmap(b) }
