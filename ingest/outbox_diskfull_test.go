package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"engram/ingest"
)

// A full disk under the outbox is waited out, not a failure: the soak
// (systest TestSoak) filled the workers' data directory, every batch's
// hold failed with ENOSPC, the events failed (the journal on the same disk
// could not record them either) and a worker sent them to the rejected
// topic: archived, never indexed. Here the disk is freed a moment after the
// run starts, and every event is indexed and announced, none failed.
func TestOutboxFullDiskIsWaitedOut(t *testing.T) {
	dir := smallTmpfs(t, "64k")
	filler := filepath.Join(dir, "filler")
	fill := make([]byte, 4096)
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for range 64 { // 64 KiB: more than the file system holds
		if _, err := f.Write(fill); err != nil {
			break
		}
	}
	f.Close()
	s := newStores(t)
	pub := &recorder{}
	ob := ingest.OpenOutbox(filepath.Join(dir, "outbox.jsonl"))
	defer ob.Close()
	cfg := s.config()
	cfg.Publisher, cfg.Outbox, cfg.BatchSize = pub, ob, 16
	cfg.Retry = ingest.RetryPolicy{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 1000, Budget: time.Minute}
	p, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	freed := time.AfterFunc(500*time.Millisecond, func() { os.Remove(filler) })
	defer freed.Stop()
	sum := p.Run(context.Background(), feed(generate(50, "full-")...), func(*ingest.Trace) {})
	if sum.Ingested != 50 || sum.Failed != 0 {
		t.Fatalf("summary %+v: want 50 ingested, none failed", sum)
	}
	if n := len(pub.ids()); n != 50 {
		t.Fatalf("%d events announced, want 50", n)
	}
}
