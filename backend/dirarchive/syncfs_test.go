package dirarchive_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"engram/backend/dirarchive"
	"engram/ingest/archivetest"
)

// syncfsStore opens an archive in a new directory. Where the store does
// not use syncfs (a kernel before 5.8, a file system syncfs does not make
// durable) it checks the fallback instead — a Sync over many directories
// fsyncs each, with no sync of the file system — and returns false: there
// is nothing more to test.
func syncfsStore(t *testing.T) (*dirarchive.Store, bool) {
	t.Helper()
	s, err := dirarchive.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if dirarchive.UsesSyncfs(s) {
		return s, true
	}
	synced := 0
	defer dirarchive.SetSyncFileSystem(func(*os.File) error { synced++; return nil })()
	n := 0
	putDays(t, s, &n, 1, 2, 3, 4, 5, 6)
	if err := s.Sync(context.Background()); err != nil || synced != 0 {
		t.Fatalf("without syncfs: err %v, file-system syncs %d, want an fsync per directory", err, synced)
	}
	t.Log("this kernel or file system gets an fsync per directory: checked that instead")
	return nil, false
}

// putDays archives one event in each of the given days of March 2026.
func putDays(t *testing.T, s *dirarchive.Store, n *int, days ...int) {
	t.Helper()
	for _, d := range days {
		*n++
		key, body := archivetest.Event(fmt.Sprintf("e-%d", *n), fmt.Sprintf("2026-03-%02dT10:00:00Z", d), "hi", nil, 0.5)
		if _, err := s.Put(context.Background(), key, body); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSyncManyDirectoriesAtOnce: a Sync over many day directories makes
// them durable with one syncfs (and fsync) of their file system instead
// of an fsync each; a failed one is reported, its directories left dirty
// for the next Sync, which reaches the file system again; few directories
// are fsynced one by one.
func TestSyncManyDirectoriesAtOnce(t *testing.T) {
	s, ok := syncfsStore(t)
	if !ok {
		return
	}
	var calls []string
	fail := errors.New("disk says no")
	var failNext bool
	defer dirarchive.SetSyncFileSystem(func(dir *os.File) error {
		calls = append(calls, dir.Name())
		if failNext {
			failNext = false
			return fail
		}
		return nil
	})()
	ctx := context.Background()
	n := 0
	putDays(t, s, &n, 1, 2, 3)
	if err := s.Sync(ctx); err != nil || len(calls) != 0 {
		t.Fatalf("three directories: err %v, file-system syncs %v, want none", err, calls)
	}
	putDays(t, s, &n, 1, 2, 3, 4, 5, 6)
	failNext = true
	if err := s.Sync(ctx); !errors.Is(err, fail) || len(calls) != 1 {
		t.Fatalf("six directories, failing: err %v, file-system syncs %v", err, calls)
	}
	if calls[0] != s.Root() {
		t.Fatalf("synced through %s, want the archive's root, held open since the store opened", calls[0])
	}
	// Nothing new: the six are still dirty, and go the same way again.
	if err := s.Sync(ctx); err != nil || len(calls) != 2 {
		t.Fatalf("retry: err %v, file-system syncs %v", err, calls)
	}
	if err := s.Sync(ctx); err != nil || len(calls) != 2 {
		t.Fatalf("clean: err %v, file-system syncs %v", err, calls)
	}
}

// TestSyncManyDirectoriesForReal: the real syncfs and fsync of the
// archive's file system run without error, and what was put is there.
func TestSyncManyDirectoriesForReal(t *testing.T) {
	s, ok := syncfsStore(t)
	if !ok {
		return
	}
	synced := 0
	defer dirarchive.SetSyncFileSystem(func(dir *os.File) error {
		synced++
		return dirarchive.SyncOneFS(dir)
	})()
	n := 0
	putDays(t, s, &n, 1, 2, 3, 4, 5, 6, 7)
	if err := s.Sync(context.Background()); err != nil || synced != 1 {
		t.Fatalf("err %v, file-system syncs %d, want 1", err, synced)
	}
	days, err := filepath.Glob(filepath.Join(s.Root(), "events", "2026", "03", "*", "*.json"))
	if err != nil || len(days) != 7 {
		t.Fatalf("archived files %v (%v), want 7", days, err)
	}
}

// TestSyncfsOnlyWhereDurable: syncfs is used on the file systems where it
// makes what it writes durable, not on FUSE (where it does nothing) nor on
// one it does not know.
func TestSyncfsOnlyWhereDurable(t *testing.T) {
	for magic, want := range map[int64]bool{
		unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true,
		unix.FUSE_SUPER_MAGIC: false, unix.NFS_SUPER_MAGIC: false, unix.OVERLAYFS_SUPER_MAGIC: false, 0x12345678: false,
	} {
		if got := dirarchive.SyncfsDurable(magic); got != want {
			t.Errorf("file system %#x: syncfs durable %v, want %v", magic, got, want)
		}
	}
}
