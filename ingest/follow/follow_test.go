package follow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"engram/ingest"
)

// collect is an IngestFunc that keeps the lines it is given.
func collect(got *[]ingest.Item) IngestFunc {
	return func(_ context.Context, items <-chan ingest.Item) ingest.Summary {
		n := 0
		for it := range items {
			*got = append(*got, it)
			n++
		}
		return ingest.Summary{Valid: n}
	}
}

func appendTo(t *testing.T, name, s string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestNextReadsWhatTheFileGrewBy(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f.jsonl")
	appendTo(t, name, "{\"a\":1}\n{\"a\":2}\n{\"partial\":")
	var got []ingest.Item
	f, sum, err := File{Name: name}.Next(context.Background(), collect(&got))
	if err != nil || sum.Valid != 2 || len(got) != 2 || f.Line != 2 || f.Offset != 16 {
		t.Fatalf("first round: %+v %+v %v, %d lines", f, sum, err, len(got))
	}
	appendTo(t, name, "1}\n")
	got = nil
	f, _, err = f.Next(context.Background(), collect(&got))
	if err != nil || len(got) != 1 || got[0].Src.Line != 3 || f.Line != 3 {
		t.Fatalf("second round: %+v %v %+v", f, err, got)
	}
	got = nil
	if f2, sum, err := f.Next(context.Background(), collect(&got)); err != nil || f2 != f || sum.Total() != 0 || got != nil {
		t.Fatalf("a round with nothing new moved: %+v %+v %v", f2, sum, err)
	}
}

func TestNextRestartsAReplacedFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f.jsonl")
	appendTo(t, name, "{\"a\":1}\n{\"a\":2}\n")
	f, _, _ := File{Name: name}.Next(context.Background(), collect(new([]ingest.Item)))
	if err := os.WriteFile(name, []byte("{\"b\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []ingest.Item
	f, _, err := f.Next(context.Background(), collect(&got))
	if err != nil || len(got) != 1 || got[0].Src.Line != 1 || f.Offset != 8 || f.Line != 1 {
		t.Fatalf("after the file shrank: %+v %v %+v", f, err, got)
	}
}

func TestNextMissingFileStays(t *testing.T) {
	f := File{Name: filepath.Join(t.TempDir(), "none.jsonl"), Offset: 5, Line: 1}
	if next, _, err := f.Next(context.Background(), collect(new([]ingest.Item))); err == nil || next != f {
		t.Fatalf("a missing file: %+v %v", next, err)
	}
}

// Regression: a followed file with one line over 4 MiB stalls the follower for
// good: every round errors at the same offset, later lines never ingest.
func TestFollowSkipsLongLine(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.jsonl")
	long := strings.Repeat("x", chunkSize+10)
	if err := os.WriteFile(name, []byte(long+"\n{\"ok\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next, _, err := File{Name: name}.Next(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "skipped a line") {
		t.Fatalf("the long line was not reported as skipped: %v", err)
	}
	if want := int64(len(long) + 1); next.Offset != want || next.Line != 1 {
		t.Fatalf("follower at offset %d line %d, want %d and 1 (just past the long line)", next.Offset, next.Line, want)
	}
	chunk, _, err := readAppended(name, next.Offset, next.Tail)
	if err != nil || string(chunk) != "{\"ok\":1}\n" {
		t.Fatalf("the next round reads %q, %v; want the line after the long one", chunk, err)
	}
}

// A file rewritten in place with longer lines has grown, but not by an
// append: it is read again from its start (the pipeline drops the events
// it already has as duplicates), and the round says so.
func TestNextRestartsAFileRewrittenLonger(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f.jsonl")
	appendTo(t, name, "{\"a\":1}\n")
	f, _, _ := File{Name: name}.Next(context.Background(), collect(new([]ingest.Item)))
	if err := os.WriteFile(name, []byte("{\"a\":1,\"b\":22}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []ingest.Item
	f, _, err := f.Next(context.Background(), collect(&got))
	if err != nil || len(got) != 1 || string(got[0].Data) != "{\"a\":1,\"b\":22}" || !f.Replaced {
		t.Fatalf("after a longer rewrite: %+v %v %+v", f, err, got)
	}
	appendTo(t, name, "{\"c\":3}\n")
	got = nil
	if f, _, _ = f.Next(context.Background(), collect(&got)); len(got) != 1 || f.Replaced {
		t.Fatalf("an append after the rewrite: %+v %+v", f, got)
	}
}
