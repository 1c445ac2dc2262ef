package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"engram/ingest"
	"engram/ingest/source"
)

// File is where following one JSON-lines file has got to. A file that
// shrank, or whose bytes before Offset are no longer those read, was
// replaced, and is read again from its start.
type File struct {
	Name   string
	Offset int64 // bytes read
	Line   int   // lines read
	// Tail is the last bytes read (at most tailSize), to tell an append
	// from a rewrite that made the file longer.
	Tail string
	// Replaced: this read found the file replaced and read it afresh.
	Replaced bool
}

// tailSize is how many of the bytes read a File remembers.
const tailSize = 64

// IngestFunc runs items through a pipeline until items is closed.
type IngestFunc func(ctx context.Context, items <-chan ingest.Item) ingest.Summary

// Most read from a followed file per round, so one huge append cannot
// hold a round for long; the rest is read on the next round.
const chunkSize = 4 << 20

// Next reads the new complete lines of f, runs them through run and
// returns where the next round starts. A line longer than a round can read
// is skipped and reported in err; the position is then past it, so the
// lines after it go on. On any other error the position does not move.
func (f File) Next(ctx context.Context, run IngestFunc) (next File, sum ingest.Summary, err error) {
	next = f
	next.Replaced = false
	chunk, restart, err := readAppended(f.Name, f.Offset, f.Tail)
	var long *LongLineError
	if errors.As(err, &long) {
		next.Offset, next.Line = f.Offset+long.Size, f.Line+1
		return next, sum, err
	}
	if err != nil {
		return next, sum, err
	}
	if restart {
		next.Offset, next.Line, next.Tail, next.Replaced = 0, 0, "", true
	}
	if len(chunk) == 0 {
		return next, sum, nil
	}
	items := make(chan ingest.Item, 256)
	go feedLines(ctx, chunk, f.Name, next.Line, items)
	sum = run(ctx, items)
	next.Offset += int64(len(chunk))
	next.Line += bytes.Count(chunk, []byte{'\n'})
	tail := next.Tail + string(chunk[max(0, len(chunk)-tailSize):])
	next.Tail = tail[max(0, len(tail)-tailSize):]
	return next, sum, nil
}

// readAppended returns the complete lines written after offset (restart:
// the file is shorter than offset, or its bytes before offset are not
// tail, so they are read from its start).
func readAppended(name string, offset int64, tail string) (chunk []byte, restart bool, err error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, false, err
	}
	if st.Size() < offset || !endsWith(fh, offset, tail) {
		offset, restart = 0, true
	}
	n := min(st.Size()-offset, chunkSize)
	if n <= 0 {
		return nil, restart, nil
	}
	buf := make([]byte, n)
	if _, err := fh.ReadAt(buf, offset); err != nil && err != io.EOF {
		return nil, restart, err
	}
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		if n == chunkSize {
			return nil, restart, skipLongLine(fh, name, offset)
		}
		return nil, restart, nil // a line still being written
	}
	return buf[:last+1], restart, nil
}

// endsWith: the bytes of fh before offset end with tail.
func endsWith(fh *os.File, offset int64, tail string) bool {
	if tail == "" || int64(len(tail)) > offset {
		return true // nothing remembered (a File made by hand) to tell by
	}
	buf := make([]byte, len(tail))
	if _, err := fh.ReadAt(buf, offset-int64(len(tail))); err != nil {
		return false
	}
	return string(buf) == tail
}

// LongLineError reports a line longer than a round reads, Size bytes with its
// line break, is not ingested (as engram ingest rejects a line over
// source.MaxLineBytes).
type LongLineError struct {
	Name string
	Size int64
}

func (e *LongLineError) Error() string {
	return fmt.Sprintf("%s: skipped a line of %d bytes (the limit is %d)", e.Name, e.Size-1, chunkSize)
}

// skipLongLine finds the end of the long line at offset; nil while it is
// still being written.
func skipLongLine(fh *os.File, name string, offset int64) error {
	buf := make([]byte, 64<<10)
	for at := offset + chunkSize; ; {
		n, err := fh.ReadAt(buf, at)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return &LongLineError{Name: name, Size: at + int64(i) + 1 - offset}
		}
		if err != nil {
			return nil // no line break yet
		}
		at += int64(n)
	}
}

// feedLines reads a chunk of JSON lines into items, numbering the lines
// from where the file's earlier rounds stopped.
func feedLines(ctx context.Context, chunk []byte, file string, before int, items chan<- ingest.Item) {
	defer close(items)
	raw := make(chan ingest.Item, 256)
	go func() {
		defer close(raw)
		_ = source.Read(ctx, bytes.NewReader(chunk), file, raw)
	}()
	for it := range raw {
		if it.Src.Line > 0 {
			it.Src.Line += before
		}
		select {
		case items <- it:
		case <-ctx.Done():
			for range raw {
			}
			return
		}
	}
}
