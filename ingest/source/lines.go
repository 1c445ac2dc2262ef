package source

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

// lineSource reads lines, numbering them, and can be read as a stream by
// the array decoder. What the decoder read past an array's end, or a line
// handed back, is read again first (pending), so that switching between
// lines and arrays never stacks readers. Handing back what was just taken
// from pending only moves back where pending is read from, and lines read
// whole from pending are not copied: objects and arrays alternating on one
// long line do not copy the rest of the line for each.
type lineSource struct {
	// ctx is checked at every piece read: a line without a newline (such
	// as /dev/zero) is skipped piece by piece, and must not outlast it.
	ctx     context.Context
	br      *bufio.Reader
	pending []byte // what is read again first: pbuf[poff:]
	pbuf    []byte // never written to once made: items may hold parts of it
	poff    int
	line    int // the number of the line readLine returns next
}

func (s *lineSource) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	s.drop()
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.take(n)
		return n, nil
	}
	return s.br.Read(p)
}

// take passes over the first n bytes of pending. Once all is taken, pbuf
// is kept until the next read, so that what was just taken can be unread.
func (s *lineSource) take(n int) {
	s.poff += n
	s.pending = s.pbuf[s.poff:]
}

// drop lets go of pbuf once all of it is taken.
func (s *lineSource) drop() {
	if len(s.pending) == 0 {
		s.pbuf, s.pending, s.poff = nil, nil, 0
	}
}

// unread hands back the rest of line ln, to be read again.
func (s *lineSource) unread(ln int, rest []byte) {
	// A line read whole from pending is a part of pbuf, followed there by
	// its newline: rest is then what was just taken.
	if n := len(rest) + 1; n <= s.poff && len(rest) > 0 && &rest[0] == &s.pbuf[s.poff-n] {
		s.poff -= n
		s.pending = s.pbuf[s.poff:]
		s.line = ln
		return
	}
	s.resume(ln, append(rest[:len(rest):len(rest)], '\n'))
}

// resume puts back left, which starts on line ln.
func (s *lineSource) resume(ln int, left []byte) {
	s.line = ln
	if len(left) == 0 {
		return
	}
	// What the decoder read from pending and did not use is the end of what
	// was taken from it: compare it (it is at most the decoder's buffer)
	// rather than copy all of pending.
	if n := len(left); n <= s.poff && bytes.Equal(s.pbuf[s.poff-n:s.poff], left) {
		s.poff -= n
		s.pending = s.pbuf[s.poff:]
		return
	}
	s.pbuf = append(append([]byte(nil), left...), s.pending...)
	s.pending, s.poff = s.pbuf, 0
}

// peek returns the next line's first byte and its first byte that is not a
// space, tab or carriage return ('\n' for a blank line; 0 at the end, or if
// it lies past the buffer).
func (s *lineSource) peek() (first, nonSpace byte) {
	for i := 0; ; i++ {
		c, ok := s.byteAt(i)
		if !ok {
			return first, 0
		}
		if i == 0 {
			first = c
		}
		if c != ' ' && c != '\t' && c != '\r' {
			return first, c
		}
	}
}

func (s *lineSource) byteAt(i int) (byte, bool) {
	if i < len(s.pending) {
		return s.pending[i], true
	}
	b, err := s.br.Peek(i - len(s.pending) + 1)
	if err != nil {
		return 0, false
	}
	return b[len(b)-1], true
}

// readLine returns the next line without its newline and its full length.
// A line longer than MaxLineBytes is consumed but not kept.
func (s *lineSource) readLine() ([]byte, int, error) {
	s.drop()
	if len(s.pending) > 0 {
		// A whole line in pending is returned as it is, not copied.
		if i := bytes.IndexByte(s.pending, '\n'); i >= 0 && i <= MaxLineBytes {
			line := s.pending[:i:i]
			s.take(i + 1)
			s.line++
			return line, i, nil
		}
	}
	var buf []byte
	n := 0
	for {
		chunk, err := s.chunk()
		n += len(chunk)
		if n <= MaxLineBytes+1 { // +1: the newline
			buf = append(buf, chunk...)
		} else {
			buf = nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if cerr := s.ctx.Err(); cerr != nil {
				return nil, n, cerr
			}
			continue
		}
		if err == nil {
			s.line++
			n--
			buf = bytes.TrimSuffix(buf, []byte{'\n'})
		}
		if n > MaxLineBytes {
			buf = nil
		}
		return buf, n, err
	}
}

// chunk returns the next piece of the current line, ending in its newline
// unless the error is bufio.ErrBufferFull (more follows) or the end.
func (s *lineSource) chunk() ([]byte, error) {
	if len(s.pending) == 0 {
		return s.br.ReadSlice('\n')
	}
	if i := bytes.IndexByte(s.pending, '\n'); i >= 0 {
		c := s.pending[: i+1 : i+1]
		s.take(i + 1)
		return c, nil
	}
	c := s.pending
	s.take(len(c))
	return c, bufio.ErrBufferFull
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

// skipSpace returns the line of the next value's first byte, counted from
// the array's first line. It looks at the decoder's buffer a byte at a time:
// copying it for every element would cost its whole size each time.
func skipSpace(dec *json.Decoder, lc *lineCounter, shift int64) int {
	rd := dec.Buffered()
	off := shift + dec.InputOffset()
	buf := make([]byte, 1)
	for {
		if n, _ := rd.Read(buf); n == 0 || !isSpaceOrComma(buf[0]) {
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
