package sqliteindex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"engram/model"
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

// The gate runs before the commit: while it runs the batch is invisible to
// readers, and a gate error stores nothing.
func TestWriteGated(t *testing.T) {
	db, _ := openTest(t)
	var seen int64 = -1
	res := db.WriteGated(context.Background(), []*model.IndexDoc{testDoc("g1"), testDoc("g2")}, func() error {
		n, err := db.Count(context.Background())
		seen = n
		return err
	})
	for i, r := range res {
		if r.Err != nil || !r.Created {
			t.Fatalf("doc %d: created=%v err=%v", i, r.Created, r.Err)
		}
	}
	if seen != 0 {
		t.Errorf("the gate saw %d documents, want 0 (it runs before the commit)", seen)
	}
	boom := errors.New("outbox full")
	res = db.WriteGated(context.Background(), []*model.IndexDoc{testDoc("g3")}, func() error { return boom })
	if !errors.Is(res[0].Err, boom) || res[0].Created {
		t.Errorf("gate error: created=%v err=%v, want the gate's error", res[0].Created, res[0].Err)
	}
	if n, _ := db.Count(context.Background()); n != 2 {
		t.Errorf("index holds %d documents after a failed gate, want 2", n)
	}
}
