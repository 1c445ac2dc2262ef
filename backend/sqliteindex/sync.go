package sqliteindex

import (
	"context"
	"engram/ingest"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sync makes every batch Write has committed so far durable. With
// Options.DeferSync a commit only writes the batch to the WAL
// (synchronous=NORMAL) and Sync fsyncs the WAL: one fsync then covers every
// commit before it, and it runs while the next batch is being written,
// where with synchronous=FULL each commit waited for its own fsync holding
// the write lock. Without DeferSync each commit is durable already and
// Sync does nothing.
//
// Why this is as durable as FULL: a commit is complete once its frames are
// in the WAL file, and FULL does nothing but fdatasync that file at commit.
// A checkpoint (NORMAL syncs the WAL before it and the database after it)
// and a WAL restart (which reuses the file from its start, under new salts)
// need no help: what Sync flushes is always the file's current contents.
// The WAL's directory entry is synced the first time Sync sees its inode,
// as SQLite does for a journal it creates.
func (db *DB) Sync(ctx context.Context) error {
	if !db.deferSync || db.w == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	db.syncMu.Lock()
	defer db.syncMu.Unlock()
	wal := db.abs + "-wal"
	f, err := os.Open(wal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no WAL: the last connection checkpointed it and synced the database
	}
	if err != nil {
		return fmt.Errorf("sqlite index: sync %s: %w", wal, err)
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("sqlite index: sync %s: %w", wal, err)
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sqlite index: sync %s: %w", wal, err)
	}
	ino := st.Sys().(*syscall.Stat_t).Ino
	if ino == db.walIno {
		return nil
	}
	if err := ingest.SyncDir(filepath.Dir(wal)); err != nil {
		return fmt.Errorf("sqlite index: sync %s: %w", filepath.Dir(wal), err)
	}
	db.walIno = ino
	return nil
}
