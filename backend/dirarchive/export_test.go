package dirarchive

// KernelAtLeast is exported for tests.
var KernelAtLeast = kernelAtLeast

// SetSyncFileSystem replaces what syncs a whole file system, for a test.
func SetSyncFileSystem(f func(dir string) error) (restore func()) {
	old := syncFileSystem
	syncFileSystem = f
	return func() { syncFileSystem = old }
}
