package dirarchive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// Store is a write-once archive directory. It is safe for concurrent use,
// also by several processes.
type Store struct {
	root string
	dirs *groupCommit[string, struct{}] // fsyncs of directories
	data *groupCommit[struct{}, int]    // makes new files' contents durable
	fs   *fileSystem                    // nil: no syncfs, an fsync per file and per directory

	mu    sync.Mutex
	dirty map[string]bool // directories with entries not yet fsynced
	made  sync.Map        // directories known to exist durably
	mkMu  sync.Mutex      // serialises making directories
}

// Open returns the archive rooted at dir, creating it if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("archive directory %s: %w", dir, err)
	}
	fs, err := openFileSystem(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{
		root:  dir,
		dirs:  newGroupCommit(func(dir string, _ []struct{}) error { return ingest.SyncDir(dir) }),
		fs:    fs,
		dirty: map[string]bool{},
	}
	s.data = newGroupCommit(func(_ struct{}, fds []int) error { return s.syncData(fds) })
	return s, nil
}

// Close lets go of the file system the store syncs through; it comes after
// the last Put and Sync (any after it fsync each file and directory).
func (s *Store) Close() error {
	s.mu.Lock()
	fs := s.fs
	s.fs = nil
	s.mu.Unlock()
	if fs == nil {
		return nil
	}
	return fs.close()
}

// fileSystem is the file system to syncfs through, nil for none.
func (s *Store) fileSystem() *fileSystem {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fs
}

// Root is the archive's directory.
func (s *Store) Root() string { return s.root }

// Describe names the store for people.
func (s *Store) Describe() string { return "dir " + s.root }

// Path maps a key onto the file that holds it, refusing keys that would
// leave the root.
func (s *Store) Path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") || !fs.ValidPath(key) {
		return "", fmt.Errorf("invalid archive key %s", model.Quote(key))
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// Put writes body under key once: an unnamed file (O_TMPFILE, else a named
// temporary one) is fsynced and then linked under its final name, which
// fails if the name exists, so no partial file is ever visible and of two
// racing writers exactly one wins. The entry is durable once Sync returns,
// so that a batch shares one fsync per directory.
func (s *Store) Put(ctx context.Context, key string, body []byte) (bool, error) {
	final, err := s.Path(key)
	if err != nil {
		return false, err
	}
	dir := filepath.Dir(final)
	if err := s.mkdirDurable(dir); err != nil {
		return false, err
	}
	err = s.linkNew(dir, final, body)
	if err != nil {
		if errors.Is(err, unix.EEXIST) || errors.Is(err, fs.ErrExist) {
			return false, s.compare(key, final, body)
		}
		return false, fmt.Errorf("archive %s: %w", key, err)
	}
	s.markDirty(dir)
	return true, nil
}

// markDirty records dirs as holding entries not yet made durable.
func (s *Store) markDirty(dirs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, dir := range dirs {
		s.dirty[dir] = true
	}
}

// Concurrency is how many Puts the pipeline should run at once: each waits
// for a shared flush of its file's contents (see syncData), and the more
// wait together, the fewer flushes, down to the disk's own rate; on a
// 2-core machine 128 writers did 11,400 events/s where 8 did 5,600.
func (s *Store) Concurrency() int { return 64 * runtime.NumCPU() }

// Sync makes the entries of every object Put so far durable.
func (s *Store) Sync(ctx context.Context) error {
	s.mu.Lock()
	dirs := s.dirty
	s.dirty = map[string]bool{}
	s.mu.Unlock()
	fs := s.fileSystem()
	if len(dirs) < syncfsDirs || fs == nil {
		return s.syncEach(dirs)
	}
	left, err := s.syncFS(fs, dirs)
	if eerr := s.syncEach(left); err == nil {
		err = eerr
	}
	return err
}

// syncEach fsyncs each of dirs; those that fail are dirty again.
func (s *Store) syncEach(dirs map[string]bool) error {
	// The directories' fsyncs wait for the disk side by side: a batch of
	// events spread over many days touches as many day directories, and
	// one after the other their flushes were most of the batch's sync.
	errs := make(chan error, len(dirs))
	sem := make(chan struct{}, syncDirsAtOnce)
	for dir := range dirs {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			err := s.dirs.do(dir, struct{}{})
			if err != nil {
				s.markDirty(dir)
				err = fmt.Errorf("archive: sync directory %s: %w", dir, err)
			}
			errs <- err
		}()
	}
	var first error
	for range dirs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// syncDirsAtOnce bounds the directory fsyncs one Sync runs at once.
const syncDirsAtOnce = 32

// syncfsDirs is how many directories a Sync makes durable with syncFS
// rather than with an fsync each.
const syncfsDirs = 4

// syncFS makes the entries of dirs durable with one syncfs(2) and one fsync
// instead of an fsync (a disk cache flush) per directory (see syncfsDurable).
// It returns the directories left for syncEach (another file system, too
// few, not stat-able). A failed syncfs is returned with its directories
// dirty again: fsyncs after it would not report its write-back error.
func (s *Store) syncFS(fs *fileSystem, dirs map[string]bool) (map[string]bool, error) {
	left := map[string]bool{}
	var group []string
	for dir := range dirs {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil || st.Dev != fs.dev {
			left[dir] = true
			continue
		}
		group = append(group, dir)
	}
	if len(group) < syncfsDirs {
		for _, dir := range group {
			left[dir] = true
		}
		return left, nil
	}
	if err := syncFileSystem(fs.dirs); err != nil {
		s.markDirty(group...)
		return left, fmt.Errorf("archive: sync directories (syncfs of %s): %w", s.root, err)
	}
	return left, nil
}

func (s *Store) compare(key, final string, body []byte) error {
	old, err := os.ReadFile(final)
	if err != nil {
		return fmt.Errorf("archive %s exists but cannot be read: %w", key, err)
	}
	if model.SameEvent(old, body) {
		return nil
	}
	return &ingest.ConflictError{Key: key}
}

// linkNew writes body durably to a new file named final in dir.
func (s *Store) linkNew(dir, final string, body []byte) error {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return renameNew(dir, final, body) // no O_TMPFILE on this file system
	}
	// The descriptor is used with plain system calls: an os.File would
	// cost an fcntl to ask whether it can be polled, for a regular file.
	defer unix.Close(fd)
	if err := writeAll(fd, body); err != nil {
		return err
	}
	if err := s.data.do(struct{}{}, fd); err != nil {
		return err
	}
	return linkFD(fd, final)
}

// writeAll writes body to fd, going on after a short write or an
// interruption.
func writeAll(fd int, body []byte) error {
	for len(body) > 0 {
		n, err := unix.Write(fd, body)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		body = body[n:]
	}
	return nil
}

// procLink is set once linkat(AT_EMPTY_PATH) was refused: before Linux 6.10
// it needs CAP_DAC_READ_SEARCH, and linking through /proc/self/fd (one path
// walk more) needs no privilege.
var procLink atomic.Bool

func linkFD(fd int, final string) error {
	if !procLink.Load() {
		err := unix.Linkat(fd, "", unix.AT_FDCWD, final, unix.AT_EMPTY_PATH)
		if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
			return err
		}
		err = linkProc(fd, final)
		if err == nil {
			procLink.Store(true)
		}
		return err
	}
	return linkProc(fd, final)
}

func linkProc(fd int, final string) error {
	return unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, final, unix.AT_SYMLINK_FOLLOW)
}

// renameNew is linkNew for file systems without O_TMPFILE.
func renameNew(dir, final string, body []byte) error {
	tmp, err := writeTemp(dir, body)
	if err != nil {
		return err
	}
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, final, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		if err = os.Link(tmp, final); err == nil {
			_ = os.Remove(tmp)
		}
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

func writeTemp(dir string, body []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("archive: %w", err)
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("archive: write %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// mkdirDurable creates dir and its missing parents and makes their entries
// durable, once per directory and process. Directories found existing are
// synced too: another writer (or process) may have created them and not yet
// synced, and an object must not be reported as archived before the path to
// it is durable. Creation is serialised, so no caller proceeds past a
// directory another caller is still making durable.
func (s *Store) mkdirDurable(dir string) error {
	if _, ok := s.made.Load(dir); ok {
		return nil
	}
	s.mkMu.Lock()
	defer s.mkMu.Unlock()
	return s.mkdirs(dir)
}

func (s *Store) mkdirs(dir string) error {
	if _, ok := s.made.Load(dir); ok {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir && parent != s.root {
		if err := s.mkdirs(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("archive: %w", err)
	}
	if err := s.realDir(dir); err != nil {
		return err
	}
	if err := s.dirs.do(parent, struct{}{}); err != nil {
		return fmt.Errorf("archive: sync directory %s: %w", parent, err)
	}
	s.made.Store(dir, true)
	return nil
}

// linkError says the archive met a symbolic link below its root. Links are
// refused, never followed, by writers and readers alike: the archive is
// write-once, so nothing may be written through one, and what verify and
// reindex list must be what show reads and ingest wrote.
func (s *Store) linkError(path string) error {
	rel, _ := filepath.Rel(s.root, path)
	return fmt.Errorf("archive: %s is a symbolic link, which the archive does not follow "+
		"(replace it with the directory or file it points to)", filepath.ToSlash(rel))
}

// realDir makes sure dir, below the root, is a directory and not a link.
func (s *Store) realDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return s.linkError(dir)
	}
	return nil
}

// noLinks makes sure no directory on the way from the root to p is a link.
func (s *Store) noLinks(p string) error {
	for dir := filepath.Dir(p); dir != s.root && len(dir) > len(s.root); dir = filepath.Dir(dir) {
		if st, err := os.Lstat(dir); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return s.linkError(dir)
		}
	}
	return nil
}

// Get reads the object under key, at most limit bytes of it (no limit when
// limit <= 0). A link on the way to it, or at it, is refused.
func (s *Store) Get(ctx context.Context, key string, limit int64) (*ingest.Object, error) {
	p, err := s.Path(key)
	if err != nil {
		return nil, err
	}
	if err := s.noLinks(p); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, s.linkError(p)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", key, backend.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: %w", key, backend.ErrNotFound)
	}
	o := &ingest.Object{Key: key, Size: st.Size(), LastModified: st.ModTime()}
	r := io.Reader(f)
	if limit > 0 && st.Size() > limit {
		r, o.Truncated = io.LimitReader(f, limit), true
	}
	if o.Body, err = io.ReadAll(r); err != nil {
		return nil, err
	}
	if !o.Truncated {
		sum := sha256.Sum256(o.Body)
		o.ETag = "sha256:" + hex.EncodeToString(sum[:])
	}
	return o, nil
}

// List calls fn with every key under prefix, in lexical order (which is
// date order), skipping temporary files. A link below the root is an error.
func (s *Store) List(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	start := s.root
	if dir := prefix[:strings.LastIndex(prefix, "/")+1]; dir != "" {
		start = filepath.Join(s.root, filepath.FromSlash(dir))
	}
	if err := s.noLinks(filepath.Join(start, "-")); err != nil {
		return err
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.Type()&fs.ModeSymlink != 0 && p != s.root {
			return s.linkError(p) // WalkDir would pass over it: say so instead
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, _ := filepath.Rel(s.root, p)
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return fn(key, info.Size())
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
