package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxLineBytes is the longest input line (one event) accepted. Longer lines
// are rejected without being held in memory.
const MaxLineBytes = 4 << 20

var bom = []byte{0xEF, 0xBB, 0xBF}

// Read streams the events of r to out: JSON Lines, a JSON array, or one (or
// several concatenated) pretty-printed JSON objects. Each input carries its
// file and line. Problems of one line are sent as items with Err set, so the
// lines around them go on; an error that makes the rest of r unreadable is
// sent last. Read returns early when ctx is cancelled.
func Read(ctx context.Context, r io.Reader, name string, out chan<- Item) error {
	br := bufio.NewReaderSize(r, 256<<10)
	if head, _ := br.Peek(3); bytes.Equal(head, bom) {
		br.Discard(3)
	}
	first, err := firstByte(br)
	if err != nil {
		return nil // empty input
	}
	if first == '[' {
		return readValues(ctx, br, name, true, out)
	}
	if first == '{' && firstLineIncomplete(br) {
		return readValues(ctx, br, name, false, out)
	}
	return readLines(ctx, br, name, out)
}

func firstByte(br *bufio.Reader) (byte, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return 0, err
		}
		c := b[i-1]
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, nil
		}
	}
}

// firstLineIncomplete tells a pretty-printed object from JSON Lines: its first
// line is a prefix of a JSON value, not a value or garbage.
func firstLineIncomplete(br *bufio.Reader) bool {
	buf, _ := br.Peek(br.Size())
	i := bytes.IndexByte(buf, '\n')
	if i < 0 && len(buf) == br.Size() {
		return false // one very long line: JSON Lines
	}
	if i >= 0 {
		buf = buf[:i]
	}
	var v json.RawMessage
	err := json.Unmarshal(buf, &v)
	return err != nil && err.Error() == "unexpected end of JSON input"
}

func send(ctx context.Context, out chan<- Item, it Item) bool {
	select {
	case out <- it:
		return true
	case <-ctx.Done():
		return false
	}
}

func readLines(ctx context.Context, br *bufio.Reader, name string, out chan<- Item) error {
	for line := 1; ; line++ {
		data, n, err := readLine(br)
		if len(bytes.TrimSpace(data)) > 0 || n > MaxLineBytes {
			it := Item{Src: Source{name, line}, Data: data, Err: checkLine(data, n)}
			if !send(ctx, out, it) {
				return ctx.Err()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
}

// readLine returns the next line without its newline and its full length.
// A line longer than MaxLineBytes is consumed but not kept.
func readLine(br *bufio.Reader) ([]byte, int, error) {
	var buf []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if n <= MaxLineBytes {
			buf = append(buf, chunk...)
		} else {
			buf = nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte{'\n'})
		if err == nil && n > 0 {
			n-- // the newline
		}
		return buf, n, err
	}
}

func checkLine(data []byte, n int) error {
	switch {
	case n > MaxLineBytes:
		return fmt.Errorf("line is %d bytes, longer than the %d-byte limit; skipped", n, MaxLineBytes)
	case bytes.HasPrefix(data, bom):
		return errors.New("line starts with a UTF-8 byte-order mark (allowed only at the start of a file)")
	case !utf8.Valid(data):
		return fmt.Errorf("invalid UTF-8 at byte %d", invalidAt(data))
	}
	return nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// readValues decodes a JSON array's elements (inArray) or a sequence of
// top-level values, locating each by the line it starts on.
func readValues(ctx context.Context, br *bufio.Reader, name string, inArray bool, out chan<- Item) error {
	lines := &lineCounter{r: br}
	dec := json.NewDecoder(lines)
	if inArray {
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("%s:1: %w", name, err)
		}
	}
	for dec.More() {
		start := skipSpace(dec, lines)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			send(ctx, out, Item{Src: Source{name, start}, Err: fmt.Errorf("invalid JSON: %w; the rest of the file is unreadable", err)})
			return nil
		}
		it := Item{Src: Source{name, start}, Data: v, Err: checkLine(v, len(v))}
		if !send(ctx, out, it) {
			return ctx.Err()
		}
	}
	return nil
}

// skipSpace returns the line of the next value's first byte.
func skipSpace(dec *json.Decoder, lc *lineCounter) int {
	buf, _ := io.ReadAll(io.LimitReader(dec.Buffered(), 1<<20))
	off := dec.InputOffset()
	for _, c := range buf {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' {
			break
		}
		off++
	}
	return lc.lineAt(off)
}

// lineCounter remembers where the newlines it has passed on are, dropping
// those before the last asked-about offset so memory stays bounded.
type lineCounter struct {
	r        io.Reader
	read     int64
	newlines []int64
	dropped  int
}

func (l *lineCounter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			l.newlines = append(l.newlines, l.read+int64(i))
		}
	}
	l.read += int64(n)
	return n, err
}

func (l *lineCounter) lineAt(off int64) int {
	i := 0
	for i < len(l.newlines) && l.newlines[i] < off {
		i++
	}
	l.dropped += i
	l.newlines = l.newlines[i:]
	return l.dropped + 1
}
