package source

import (
	"encoding/json"
	"engram/ingest"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// arrayRead is the state of one array being streamed: the decoder, the
// line counter under it, and how the decoder's offsets map onto the
// counter's (a decoder restarted after a rescued element reads a '[' of
// its own first).
type arrayRead struct {
	dec        *json.Decoder
	lc         *lineCounter
	lim        *capReader
	base, open int   // the line before the counter's first, the array's line
	shift      int64 // counter offset = decoder offset + shift
}

func (a *arrayRead) offset(decOff int64) int64 { return decOff + a.shift }

// elementSlack is the space (and comma) before an element that the limit
// on what the decoder may read for it allows for.
const elementSlack = 64 << 10

const noCap = math.MaxInt64

var errElementTooLong = errors.New("array element longer than the limit")

// capReader stops the decoder once it has read up to stop (an offset of
// lc) for one element, so that an element is never held whole.
type capReader struct {
	lc   *lineCounter
	stop int64
}

func (c *capReader) Read(p []byte) (int, error) {
	room := c.stop - c.lc.read
	if room <= 0 {
		return 0, errElementTooLong
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	return c.lc.Read(p)
}

// rescue follows, with the syntax tracker, an element the decoder gave up
// on at the limit: it is emitted if it turns out to fit (the decoder's
// count included the space before it), else reported as too long, and a
// decoder is started on what follows it. done: the array ended here (its
// structure lost, or the input).
func (r *reader) rescue(a *arrayRead) (done bool, err error) {
	off := a.offset(a.dec.InputOffset()) // counter offset of chunk[0]
	chunk, _ := io.ReadAll(a.dec.Buffered())
	var (
		s         syntax
		kept      []byte
		start     int64 = -1
		startLine int
		buf       = make([]byte, 64<<10)
	)
	for {
		for i, c := range chunk {
			if start < 0 {
				if isSpaceOrNewline(c) {
					continue
				}
				start = off + int64(i)
				startLine = a.base + a.lc.lineAt(start)
			}
			num := s.st == synZero || s.st == synInt || s.st == synFrac || s.st == synExpDig
			s.step(c)
			end := i + 1
			if num && s.done {
				end = i // the byte that ended a number is not the number's
			} else if len(kept) <= MaxLineBytes {
				kept = append(kept, c)
			}
			switch {
			case s.failed:
				return true, r.lostArray(a, startLine, off+int64(i), chunk[i:])
			case s.done:
				if !r.send(r.rescued(startLine, kept)) {
					return true, r.ctx.Err()
				}
				return r.afterElement(a, off+int64(end), chunk[end:])
			}
		}
		off += int64(len(chunk))
		if start >= 0 {
			a.lc.lineAt(off) // newlines inside the element need not be kept
		}
		n, err := a.lc.Read(buf)
		if n == 0 && err != nil {
			line := startLine
			if start < 0 {
				line = a.base + a.lc.lineAt(off)
			}
			r.send(ingest.Item{Src: r.at(line), Err: problem("invalid JSON: the file ends inside this array element")})
			return true, r.ctx.Err()
		}
		chunk = buf[:n]
	}
}

// rescued is the item of a rescued element: the element, or what is wrong.
func (r *reader) rescued(line int, kept []byte) ingest.Item {
	if len(kept) > MaxLineBytes {
		return ingest.Item{Src: r.at(line), Err: problem(fmt.Sprintf("array element longer than the %d-byte limit; skipped", MaxLineBytes))}
	}
	return ingest.Item{Src: r.at(line), Data: kept, Err: checkLine(kept, len(kept))}
}

// lostArray reports a syntax error inside a rescued element and hands the
// rest of the line after it to the line reader (as badElement does).
func (r *reader) lostArray(a *arrayRead, startLine int, errOff int64, rest []byte) error {
	msg := "invalid JSON in an array element"
	r.skip = &skipping{it: ingest.Item{Src: r.at(startLine), Err: problem(msg)}, msg: msg, skipped: true}
	r.src.resume(a.base+a.lc.lineAt(errOff), rest)
	if _, _, err := r.src.readLine(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s:%d: %w", r.name, startLine, err)
	}
	return nil
}

// afterElement reads what follows a rescued element, from off (rest, then
// the input): space, then ',' and a decoder for the next elements, or ']'.
func (r *reader) afterElement(a *arrayRead, off int64, rest []byte) (done bool, err error) {
	buf := make([]byte, 4<<10)
	for {
		for i, c := range rest {
			if isSpaceOrNewline(c) {
				continue
			}
			at := off + int64(i)
			line := a.base + a.lc.lineAt(at)
			switch c {
			case ']':
				r.src.resume(line, rest[i+1:])
				return true, nil
			case ',':
				r.src.resume(line, rest[i+1:])
				r.restart(a, line)
				return false, nil
			}
			msg := fmt.Sprintf("invalid JSON after an array element: %q where ',' or ']' was due", c)
			r.skip = &skipping{it: ingest.Item{Src: r.at(line), Err: problem(msg)}, msg: msg, skipped: true}
			r.src.resume(line, rest[i:])
			_, _, err := r.src.readLine()
			if err != nil && !errors.Is(err, io.EOF) {
				return true, fmt.Errorf("%s:%d: %w", r.name, line, err)
			}
			return true, nil
		}
		off += int64(len(rest))
		n, err := a.lc.Read(buf)
		if n == 0 && err != nil {
			return true, r.unclosed(a.open, a.base+a.lc.lineAt(off))
		}
		rest = buf[:n]
	}
}

// restart starts a decoder on the elements after a comma on line, read
// back from the line source: it is given a '[' first, so that it is inside
// an array again, and counts lines afresh from line.
func (r *reader) restart(a *arrayRead, line int) {
	a.lc = &lineCounter{r: r.src}
	a.lim = &capReader{lc: a.lc, stop: noCap}
	a.base, a.shift = line-1, -1
	a.dec = json.NewDecoder(io.MultiReader(strings.NewReader("["), a.lim))
	_, _ = a.dec.Token() // the '[' given: cannot fail
}

func isSpaceOrNewline(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
