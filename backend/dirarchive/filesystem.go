package dirarchive

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fileSystem is the archive root's file system, held open so that syncfs(2)
// can make many files or directories durable at once (see openFileSystem).
// It is opened once, twice over: syncfs reports a write-back error once to
// each descriptor open when it happened, so the files' and the directories'
// flushes each see every error.
type fileSystem struct {
	dev        uint64
	data, dirs *os.File
}

// openFileSystem opens root's file system for syncfs, or returns nil when
// syncfs is not to be used there: before Linux 5.8 it reported no
// write-back errors at all, and only on the file systems named in
// syncfsDurable does it make what it writes durable (on FUSE, for one, it
// does nothing).
func openFileSystem(root string) (*fileSystem, error) {
	if !syncfsReportsErrors {
		return nil, nil
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(root, &sfs); err != nil || !syncfsDurable(int64(sfs.Type)) {
		return nil, nil
	}
	var st unix.Stat_t
	if err := unix.Stat(root, &st); err != nil {
		return nil, fmt.Errorf("archive directory %s: %w", root, err)
	}
	fs := &fileSystem{dev: st.Dev}
	for _, f := range []**os.File{&fs.data, &fs.dirs} {
		var err error
		if *f, err = os.Open(root); err != nil {
			_ = fs.close()
			return nil, fmt.Errorf("archive directory %s: %w", root, err)
		}
	}
	return fs, nil
}

// syncfsDurable says whether syncfs(2) on a file system of this type (statfs's
// f_type) writes back and waits for every dirty file and metadata block, and
// either commits its journal or log (ext4 with a journal, XFS, btrfs, f2fs)
// or, on ext4 without a journal, flushes the disk's cache before its last
// wait (which is why syncOneFS fsyncs after it). tmpfs holds nothing
// durable to begin with.
func syncfsDurable(magic int64) bool {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return true
	}
	return false
}

func (fs *fileSystem) close() error {
	var first error
	for _, f := range []*os.File{fs.data, fs.dirs} {
		if f == nil {
			continue
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// syncFileSystem is syncOneFS (a variable for tests).
var syncFileSystem = syncOneFS

// syncOneFS makes every directory entry of the file system durable:
// syncfs(2) through dir (an open directory of it), then fsync(2) of dir,
// which on ext4 without a journal flushes the disk's cache once more after
// syncfs's last write.
func syncOneFS(dir *os.File) error {
	fd := int(dir.Fd())
	if err := unix.Syncfs(fd); err != nil {
		return err
	}
	return unix.Fsync(fd)
}
