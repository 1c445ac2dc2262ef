package dirarchive_test

import (
	"testing"

	"engram/backend/dirarchive"
	"engram/ingest/archivetest"
)

// TestContract runs the archive contract shared by every backend.
func TestContract(t *testing.T) {
	archivetest.Run(t, func(t *testing.T) archivetest.Store {
		s, err := dirarchive.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestKernelVersion: the check that decides between syncfs and one fsync
// per file reads this kernel's version.
func TestKernelVersion(t *testing.T) {
	if !dirarchive.KernelAtLeast(2, 6) || dirarchive.KernelAtLeast(999, 0) {
		t.Fatal("kernel version misread")
	}
}
