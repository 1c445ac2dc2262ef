package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/ingest/source"
)

// follower ingests the lines appended to one JSON-lines file. Each round
// reads whole lines from where the last one stopped; a file that shrank
// was replaced, and is read again from its start.
type follower struct {
	file   string
	offset int64
	line   int
	busy   bool
}

// Most read from a followed file per round, so one huge append cannot
// hold a round for long; the rest is read on the next tick.
const followChunk = 4 << 20

// followRound reads the new complete lines of f and runs them through the
// pipeline, reporting stages to ch.
func followRound(ctx context.Context, rec Recorder, f follower, ch chan<- tea.Msg, run uint64) tea.Cmd {
	return func() tea.Msg {
		msg := followedMsg{file: f.file, offset: f.offset, line: f.line}
		chunk, restart, err := readAppended(f.file, f.offset)
		var long *longLineError
		if errors.As(err, &long) { // skipped, reported: the lines after it go on
			msg.offset, msg.line, msg.err = f.offset+long.size, f.line+1, err
			return msg
		}
		if err != nil {
			msg.err = err
			return msg
		}
		if restart {
			msg.offset, msg.line = 0, 0
		}
		if len(chunk) == 0 {
			return msg
		}
		items := make(chan ingest.Item, 256)
		go feedLines(ctx, chunk, f.file, msg.line, items)
		msg.sum = rec.Ingest(ctx, items, chanObserver{ctx: ctx, ch: ch, run: run})
		msg.offset += int64(len(chunk))
		msg.line += bytes.Count(chunk, []byte{'\n'})
		return msg
	}
}

// readAppended returns the complete lines written after offset (restart:
// the file is shorter than offset, so they are read from its start).
func readAppended(name string, offset int64) (chunk []byte, restart bool, err error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, false, err
	}
	if st.Size() < offset {
		offset, restart = 0, true
	}
	n := min(st.Size()-offset, followChunk)
	if n <= 0 {
		return nil, restart, nil
	}
	buf := make([]byte, n)
	if _, err := fh.ReadAt(buf, offset); err != nil && err != io.EOF {
		return nil, restart, err
	}
	last := bytes.LastIndexByte(buf, '\n')
	if last < 0 {
		if n == followChunk {
			return nil, restart, skipLongLine(fh, name, offset)
		}
		return nil, restart, nil // a line still being written
	}
	return buf[:last+1], restart, nil
}

// longLineError: a line longer than followChunk, size bytes with its line
// break, is not ingested (as engram ingest rejects a line over
// ingest.MaxLineBytes).
type longLineError struct {
	name string
	size int64
}

func (e *longLineError) Error() string {
	return fmt.Sprintf("%s: skipped a line of %d bytes (the limit is %d)", e.name, e.size-1, followChunk)
}

// skipLongLine finds the end of the long line at offset; nil while it is
// still being written.
func skipLongLine(fh *os.File, name string, offset int64) error {
	buf := make([]byte, 64<<10)
	for at := offset + followChunk; ; {
		n, err := fh.ReadAt(buf, at)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return &longLineError{name: name, size: at + int64(i) + 1 - offset}
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
