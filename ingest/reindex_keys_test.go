package ingest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestReindexKeys indexes exactly the keys given (duplicates once, in
// batches), counts a missing object as unreadable, writes no checkpoint,
// and leaves what the index holds as it is.
func TestReindexKeys(t *testing.T) {
	a := newKeysArchive(t, 10)
	ix := newMemIndex()
	cp := filepath.Join(t.TempDir(), "cp")
	keys := []string{a.keys[7], a.keys[2], a.keys[7], a.keys[5], "events/2026/05/08/nosuch.json"}
	sum, err := ReindexKeys(context.Background(), ReindexConfig{Archive: a, Index: ix, BatchSize: 2, Checkpoint: cp}, keys)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Objects != 4 || sum.Created != 3 || sum.Bad != 1 || ix.count() != 3 || len(sum.Errors) != 1 || !strings.Contains(sum.Errors[0], "nosuch") {
		t.Fatalf("summary %+v, index holds %d", sum, ix.count())
	}
	if sum.CheckpointAfter != "" {
		t.Errorf("a checkpoint was written: %q", sum.CheckpointAfter)
	}
	again, err := ReindexKeys(context.Background(), ReindexConfig{Archive: a, Index: ix}, keys[:2])
	if err != nil || again.Created != 0 || again.Existing != 2 {
		t.Errorf("again: %+v, %v", again, err)
	}
}
