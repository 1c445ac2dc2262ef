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
// Options.DeferSync a commit only writes to the WAL (synchronous=NORMAL) and
// Sync fsyncs it, one fsync for every commit before it, while the next batch
// is written: as durable as FULL, which only fdatasyncs the WAL at each
// commit. Without DeferSync Sync does nothing.
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
