package dirarchive_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"engram/backend/dirarchive"
	"engram/ingest/archivetest"
)

// TestSyncManyDirectoriesAtOnce: a Sync over many day directories makes
// them durable with one syncfs (and fsync) of their file system instead
// of an fsync each; a failed one is reported, its directories left dirty
// for the next Sync, which reaches the file system again; few directories
// are fsynced one by one.
func TestSyncManyDirectoriesAtOnce(t *testing.T) {
	s, err := dirarchive.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	fail := errors.New("disk says no")
	var failNext bool
	defer dirarchive.SetSyncFileSystem(func(dir string) error {
		calls = append(calls, dir)
		if failNext {
			failNext = false
			return fail
		}
		return nil
	})()
	ctx := context.Background()
	n := 0
	put := func(days ...int) {
		t.Helper()
		for _, d := range days {
			n++
			key, body := archivetest.Event(fmt.Sprintf("e-%d", n), fmt.Sprintf("2026-03-%02dT10:00:00Z", d), "hi", nil, 0.5)
			if _, err := s.Put(ctx, key, body); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(1, 2, 3)
	if err := s.Sync(ctx); err != nil || len(calls) != 0 {
		t.Fatalf("three directories: err %v, file-system syncs %v, want none", err, calls)
	}
	put(1, 2, 3, 4, 5, 6)
	failNext = true
	if err := s.Sync(ctx); !errors.Is(err, fail) || len(calls) != 1 {
		t.Fatalf("six directories, failing: err %v, file-system syncs %v", err, calls)
	}
	if !strings.Contains(calls[0], "events/2026/03/0") {
		t.Fatalf("synced through %s, want a day directory", calls[0])
	}
	// Nothing new: the six are still dirty, and go the same way again.
	if err := s.Sync(ctx); err != nil || len(calls) != 2 {
		t.Fatalf("retry: err %v, file-system syncs %v", err, calls)
	}
	if err := s.Sync(ctx); err != nil || len(calls) != 2 {
		t.Fatalf("clean: err %v, file-system syncs %v", err, calls)
	}
}
