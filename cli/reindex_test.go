package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/ingest"
	"engram/query/verify"
)

// removeIndex deletes the SQLite index, as docs/commands.md's reindex recipe does.
func (c *cli) removeIndex() {
	for _, f := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		if err := os.Remove(filepath.Join(c.data, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			c.t.Fatal(err)
		}
	}
}

// interruptReindex runs engram reindex's own configuration in batches of
// 10 and cancels it, as Ctrl-C would, after 20 objects: it leaves the
// checkpoint an interrupted engram reindex leaves.
func (c *cli) interruptReindex() {
	c.t.Helper()
	e := &env{strings.NewReader(""), io.Discard, io.Discard, func(k string) string { return c.env[k] }}
	fs, o := reindexFlags(e)
	if err := fs.Parse([]string{"--data", c.data}); err != nil {
		c.t.Fatal(err)
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := openBackends(ctx, conf, e)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	from, to := verify.KeyRange(time.Time{}, time.Time{})
	cfg := reindexConfig(st, from, to, false)
	cfg.BatchSize = 10
	cfg.Progress = func(s ingest.ReindexSummary) {
		if s.Objects >= 20 {
			cancel()
		}
	}
	if sum, err := ingest.Reindex(ctx, cfg); !errors.Is(err, context.Canceled) || sum.CheckpointAfter == "" {
		c.t.Fatalf("interrupted reindex: err %v, %+v", err, sum)
	}
	if _, err := os.Stat(cfg.Checkpoint); err != nil {
		c.t.Fatalf("no checkpoint: %v", err)
	}
}

// TestReindexDeletedIndexAfterInterruptedRun is the reviewer's scenario: an
// interrupted reindex leaves a checkpoint, the index is deleted again, and
// the next reindex must index every event, not resume after the
// checkpoint.
func TestReindexDeletedIndexAfterInterruptedRun(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(demoLines(60), "ingest"); code != 0 {
		t.Fatalf("ingest: code %d, stderr %s", code, stderr)
	}
	c.removeIndex()
	c.interruptReindex()
	c.removeIndex()
	_, stderr, code := c.run("", "reindex")
	if code != 0 || !strings.Contains(stderr, "does not match this index") || !strings.Contains(stderr, "starting over") ||
		!strings.Contains(stderr, "60 objects, 60 created") || strings.Contains(stderr, "resuming") {
		t.Fatalf("reindex: code %d, stderr %s", code, stderr)
	}
	if out, _, code := c.run("", "verify"); code != 0 {
		t.Fatalf("verify after reindex: code %d, out %s", code, out)
	}
}

// TestReindexResumesItsOwnCheckpoint: the checkpoint of an interrupted run
// into the same, intact index is still resumed.
func TestReindexResumesItsOwnCheckpoint(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(60), "ingest")
	c.removeIndex()
	c.interruptReindex()
	_, stderr, code := c.run("", "reindex")
	if code != 0 || !strings.Contains(stderr, "engram: resuming after events/") || !strings.Contains(stderr, "40 objects, 40 created") {
		t.Fatalf("reindex: code %d, stderr %s", code, stderr)
	}
	if out, _, code := c.run("", "verify"); code != 0 {
		t.Fatalf("verify after resumed reindex: code %d, out %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(c.data, "reindex.all-all.checkpoint")); !os.IsNotExist(err) {
		t.Fatalf("finished reindex left its checkpoint: %v", err)
	}
}

// TestReindexRestartIgnoresCheckpoint: --restart rebuilds the whole range.
func TestReindexRestartIgnoresCheckpoint(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(60), "ingest")
	c.removeIndex()
	c.interruptReindex()
	_, stderr, code := c.run("", "reindex", "--restart")
	if code != 0 || !strings.Contains(stderr, "ignoring checkpoint") || !strings.Contains(stderr, "60 objects, 40 created, 20 already indexed") {
		t.Fatalf("reindex --restart: code %d, stderr %s", code, stderr)
	}
}

// TestReindexInterruptedSaysSo: an interrupted reindex says how far it got
// and what running it again does, instead of "engram: context canceled".
func TestReindexInterruptedSaysSo(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(30), "ingest")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reindex := func() (string, int) {
		var errb bytes.Buffer
		e := &env{strings.NewReader(""), io.Discard, &errb, func(k string) string { return c.env[k] }}
		code := run(ctx, e, []string{"reindex", "--data", c.data})
		return errb.String(), code
	}
	stderr, code := reindex()
	if code != 1 || !strings.Contains(stderr, "engram: reindex interrupted after 0 objects; nothing was checkpointed; run it again to start over") ||
		strings.Contains(stderr, "context canceled") {
		t.Fatalf("interrupted reindex: code %d, stderr %s", code, stderr)
	}
	c.interruptReindex()
	stderr, code = reindex()
	if code != 1 || !strings.Contains(stderr, "engram: reindex interrupted after 0 objects; run it again to resume after events/") {
		t.Fatalf("interrupted resumed reindex: code %d, stderr %s", code, stderr)
	}
}
