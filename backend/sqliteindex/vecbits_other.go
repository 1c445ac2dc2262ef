//go:build !unix

package sqliteindex

import (
	"io"
	"os"
)

// lockFile: without flock, a single writer process is assumed.
func lockFile(*os.File) error { return nil }

// mapFile reads the first size bytes of f (no mmap here).
func mapFile(f *os.File, size int, _ bool) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, err
}

func unmapFile([]byte) {}
