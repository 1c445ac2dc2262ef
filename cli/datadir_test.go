package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sqliteErr stands in for the SQLite driver's error, which carries its
// result code.
type sqliteErr int

func (e sqliteErr) Error() string { return fmt.Sprintf("sqlite error (%d)", int(e)) }
func (e sqliteErr) Code() int     { return int(e) }

// A store's refusal to write is said as the data directory being
// read-only, naming it; other errors pass unchanged.
func TestDataDirErrorMapping(t *testing.T) {
	const dir = "/srv/engram"
	for _, err := range []error{
		errors.New("sqliteindex: open /srv/engram/index.db: attempt to write a readonly database (8)"),
		fmt.Errorf("sqliteindex: open x: %w", sqliteErr(8)),
		fmt.Errorf("sqliteindex: open x: %w", sqliteErr(8|3<<8)), // SQLITE_READONLY_ROLLBACK
		fmt.Errorf("archive directory x: %w", &fs.PathError{Op: "mkdir", Path: dir + "/archive", Err: syscall.EROFS}),
		&fs.PathError{Op: "open", Path: dir + "/archive", Err: syscall.EACCES},
	} {
		got := dataDirError(dir, err)
		if got == nil || !strings.HasPrefix(got.Error(), "data directory /srv/engram is read-only: ") || strings.Contains(got.Error(), "(8)") {
			t.Errorf("%v: became %v", err, got)
		}
	}
	for _, err := range []error{nil, errors.New("disk I/O error"), fmt.Errorf("x: %w", sqliteErr(5))} {
		if got := dataDirError(dir, err); !errors.Is(got, err) {
			t.Errorf("%v became %v", err, got)
		}
	}
	ro := &readOnlyDataError{dir + "/new", dir}
	if got := dataDirError(dir, ro); !errors.Is(got, ro) || !strings.Contains(got.Error(), "data directory /srv/engram/new cannot be made: /srv/engram is read-only") {
		t.Errorf("already said: %v", got)
	}
}

// readOnlyDir is a directory holding a data directory that cannot be
// written: chmod 0555, or, for root (whom permissions do not stop), a
// read-only bind mount of it.
func readOnlyDir(t *testing.T, fill func(dir string)) string {
	src := t.TempDir()
	fill(src)
	if os.Geteuid() != 0 {
		if err := os.Chmod(src, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(src, 0o755) })
		return src
	}
	mnt := t.TempDir()
	if err := unix.Mount(src, mnt, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("running as root, and no read-only bind mount to test with: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	if err := unix.Mount("", mnt, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("running as root, and no read-only bind mount to test with: %v", err)
	}
	return mnt
}

// ingest into a read-only data directory names the directory and says it
// is read-only, whether it holds stores already or is yet to be made.
func TestIngestReadOnlyDataDir(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(demoLines(3), "ingest"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	ro := readOnlyDir(t, func(dir string) {
		if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS(c.data)); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		data, want string
		checked    bool
	}{
		{filepath.Join(ro, "data"), "engram: data directory " + filepath.Join(ro, "data") + " is read-only: ", true},
		{filepath.Join(ro, "new", "data"), "engram: data directory " + filepath.Join(ro, "new", "data") + " cannot be made: " + ro + " is read-only: ", true},
		// Past the check (a directory that looked writable), the stores'
		// own refusals are said the same way.
		{filepath.Join(ro, "data"), "engram: data directory " + filepath.Join(ro, "data") + " is read-only: ", false},
	} {
		if !tc.checked {
			defer func(w func(string) bool) { writable = w }(writable)
			writable = func(string) bool { return true }
		}
		c.data = tc.data
		_, stderr, code := c.run(demoLines(4), "ingest")
		if code != 1 || !strings.HasPrefix(stderr, tc.want) || strings.Contains(stderr, "sqlite") || strings.Contains(stderr, "(8)") {
			t.Errorf("ingest --data %s: code %d, stderr %q, want %q", tc.data, code, stderr, tc.want)
		}
	}
}
