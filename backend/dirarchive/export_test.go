package dirarchive

import "os"

// KernelAtLeast is exported for tests.
var KernelAtLeast = kernelAtLeast

// SyncfsDurable is exported for tests.
var SyncfsDurable = syncfsDurable

// SyncOneFS is the real sync of a whole file system, for a test to wrap.
var SyncOneFS = syncOneFS

// UsesSyncfs says whether s syncs through its file system.
func UsesSyncfs(s *Store) bool { return s.fileSystem() != nil }

// SetSyncFileSystem replaces what syncs a whole file system, for a test.
func SetSyncFileSystem(f func(dir *os.File) error) (restore func()) {
	old := syncFileSystem
	syncFileSystem = f
	return func() { syncFileSystem = old }
}
