package sqliteindex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func synchronousOf(t *testing.T, db *DB) int {
	t.Helper()
	var v int
	if err := db.w.QueryRow("PRAGMA synchronous").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Without DeferSync every commit is durable (FULL); with it commits wait
// for Sync (NORMAL), which flushes the WAL and, once, its directory entry.
func TestDeferSync(t *testing.T) {
	full, _ := openTest(t)
	if got := synchronousOf(t, full); got != 2 {
		t.Errorf("default writer: synchronous=%d, want 2 (FULL)", got)
	}
	if err := full.Sync(context.Background()); err != nil {
		t.Errorf("Sync without DeferSync: %v", err)
	}

	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Open(path, Options{DeferSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := synchronousOf(t, db); got != 1 {
		t.Errorf("DeferSync writer: synchronous=%d, want 1 (NORMAL)", got)
	}
	mustWrite(t, db, testDoc("a"))
	if err := db.Sync(context.Background()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if db.walIno == 0 {
		t.Errorf("Sync did not note the WAL's inode (%v): its directory was never synced", st.Sys())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.Sync(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sync with a cancelled context: %v, want context.Canceled", err)
	}
}
