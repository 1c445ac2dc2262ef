package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"engram/ingest"
	"engram/model"
)

// MaxLineBytes is the longest input line (one event) accepted, and the
// longest value assembled from several lines. Longer lines are rejected
// without being held in memory.
const MaxLineBytes = 4 << 20

var bom = []byte{0xEF, 0xBB, 0xBF}

// Read streams the events of r to out: JSON Lines, JSON arrays, or
// concatenated JSON objects, pretty-printed or not, in any mix. The format is
// decided per value, not per file, so one bad value cannot make the reader
// misjudge the rest. Each input carries its file and the line it starts on.
// A bad input is sent as an item (with Err set, or with the bad Data for the
// pipeline to explain), and reading goes on after it; only an I/O error ends
// Read early. Read returns early when ctx is cancelled.
func Read(ctx context.Context, r io.Reader, name string, out chan<- ingest.Item) error {
	br := bufio.NewReaderSize(r, 256<<10)
	if head, _ := br.Peek(3); bytes.Equal(head, bom) {
		_, _ = br.Discard(3)
	}
	if err := checkText(br, name); err != nil {
		return err
	}
	rd := &reader{ctx: ctx, out: out, name: name, src: &lineSource{ctx: ctx, br: br, line: 1}}
	return rd.run()
}

// reader splits a file into values. Lines are read one at a time. A line
// holding a whole value is one input; one that opens a value is joined with
// the next lines until the brackets it opened are closed (shape follows
// them, looking at each byte once). Arrays are streamed element by
// element instead, as a file may be one array on one enormous line. JSON
// syntax is left to the pipeline's decoder, except where it decides where an
// input ends: a value cut short, or one that is bad across several lines.
type reader struct {
	ctx  context.Context
	out  chan<- ingest.Item
	name string
	src  *lineSource
	val  value     // the value being assembled; empty when none
	skip *skipping // set while passing over what follows a bad value
	// binary counts the lines in a row that hold control bytes: see
	// BinaryLines.
	binary int
}

// ErrNotText is wrapped by the error of a read stopped because its input is
// not text (binary or compressed data, a device).
var ErrNotText = errors.New("not text")

// BinaryLines is how many lines in a row holding control bytes (below
// U+0020 but tab and carriage return, which JSON text never holds raw)
// stop a read: the input turned out not to be text, and each line would
// only be one more reject.
const BinaryLines = 16

// textHead is how much of an input's first read checkText looks at.
const textHead = 8 << 10

// checkText refuses an input whose first bytes are not text: more than 1%
// control bytes (random or compressed data has about 11%; a text file with
// a stray one, far less). It looks only at what the first read brought,
// so a stream sending one line at a time is not kept waiting.
func checkText(br *bufio.Reader, name string) error {
	if _, err := br.Peek(1); err != nil {
		return nil // empty, or an error the reader meets again
	}
	head, _ := br.Peek(min(br.Buffered(), textHead))
	if n := controlBytes(head); len(head) >= 512 && n*100 > len(head) {
		return fmt.Errorf("%s: %w: %d of its first %d bytes are control characters, which JSON never holds; nothing read from it", name, ErrNotText, n, len(head))
	}
	return nil
}

func controlBytes(b []byte) int {
	n := 0
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			n++
		}
	}
	return n
}

// countBinary follows the lines in a row that hold control bytes and says
// when there have been BinaryLines of them.
func (r *reader) countBinary(ln int, data []byte) error {
	if controlBytes(data) == 0 {
		r.binary = 0
		return nil
	}
	if r.binary++; r.binary < BinaryLines {
		return nil
	}
	return fmt.Errorf("%s:%d: %w: %d lines in a row hold control characters, which JSON never holds; stopped here (the lines before were read)", r.name, ln, ErrNotText, BinaryLines)
}

// value is a value being assembled from lines.
type value struct {
	start int    // its first line
	buf   []byte // its lines so far, joined by newlines; nil when none
	last  int    // where in buf its last line begins
	sh    shape
	syn   syntax // follows its JSON syntax, to tell a cut (see maybeNew)
	// fed is whether syn has followed buf. A value that ends on its first
	// line, as every JSON Lines input does, never needs its syntax: it is
	// followed only once the value stays open (a pass over each byte, 2%
	// of an ingest's CPU when done for every line).
	fed bool
}

// skipping is a bad value whose report waits until the reader finds where
// to go on: the report says how far it skipped.
type skipping struct {
	it      ingest.Item
	msg     string // what is wrong, for when the report must say it
	skipped bool   // whether anything but blank lines was passed over
}

func (r *reader) run() error {
	for {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		first, nonSpace := r.src.peek()
		if r.skip != nil && startsValue(first) && !r.endSkip(false) {
			return r.ctx.Err()
		}
		if r.skip == nil && r.val.buf != nil && startsValue(first) && !r.val.syn.acceptsValue() {
			// The open value cannot go on with a value on this line: it was
			// cut short, and this line is the next input, whatever its size.
			v := r.val
			r.val = value{}
			if !r.emitValue(v.start, v.buf) {
				return r.ctx.Err()
			}
		}
		if r.skip == nil && r.val.buf == nil && nonSpace == '[' {
			if err := r.readArray(); err != nil {
				return err
			}
			continue
		}
		ln := r.src.line
		data, n, err := r.src.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			if cerr := r.ctx.Err(); cerr != nil {
				return cerr
			}
			return fmt.Errorf("%s:%d: %w", r.name, ln, err)
		}
		if err := r.countBinary(ln, data); err != nil {
			return err
		}
		if !r.addLine(ln, data, n) {
			return r.ctx.Err()
		}
		if errors.Is(err, io.EOF) && len(r.src.pending) == 0 {
			return r.finish()
		}
	}
}

// startsValue tells where to resume after a bad value: at a line starting,
// in its first column, a value. Inside a pretty-printed object, nested values
// are usually indented, so they are not mistaken for new inputs.
func startsValue(first byte) bool { return first == '{' || first == '[' }

// finish reports what the end of the file left open.
func (r *reader) finish() error {
	if r.skip != nil && !r.endSkip(true) {
		return r.ctx.Err()
	}
	if r.val.buf != nil && !r.emitValue(r.val.start, r.val.buf) { // cut short
		return r.ctx.Err()
	}
	return nil
}

// addLine takes the next line: a new value, part of the one being
// assembled, or part of what is skipped after a bad one.
func (r *reader) addLine(ln int, data []byte, n int) bool {
	switch {
	case r.skip != nil:
		r.skip.skipped = r.skip.skipped || n > MaxLineBytes || !isBlank(data)
		return true
	case r.val.buf == nil && n > MaxLineBytes:
		return r.send(ingest.Item{Src: r.at(ln), Err: checkLine(nil, n)})
	case r.val.buf == nil:
		return r.begin(ln, data)
	case n <= MaxLineBytes && len(data) > 0 && startsValue(data[0]):
		return r.maybeNew(ln, data)
	case n > MaxLineBytes || len(r.val.buf)+1+n > MaxLineBytes:
		r.tooLong(ln)
		return true
	}
	r.val.syn.feed(newline)
	r.val.syn.feed(data)
	return r.extend(ln, data)
}

// tooLong rejects the value being assembled when line ln would take it past
// the limit, and skips to the next value: it is not kept, like a long line.
func (r *reader) tooLong(ln int) {
	v := r.val
	r.val = value{}
	msg := fmt.Sprintf("value is longer than the %d-byte limit at line %d", MaxLineBytes, ln)
	r.skip = &skipping{it: ingest.Item{Src: r.at(v.start), Err: problem(msg)}, msg: msg, skipped: true}
}

// begin starts a value with line ln, or what is left of it after another
// value. A line not opening an object is one input, whole, as in JSON Lines;
// one opening an array is handed back to be streamed.
func (r *reader) begin(ln int, line []byte) bool {
	i := nonSpace(line)
	switch {
	case i < 0:
		return true
	case line[i] == '[':
		r.src.unread(ln, line)
		return true
	case line[i] != '{':
		return r.emit(ln, line)
	}
	r.val = value{start: ln, buf: line}
	return r.settle(ln, i)
}

// maybeNew takes a line that opens a value in its first column while another
// value is open: most likely the open one was cut short (a truncated JSON
// Lines line) and this line is the next input. The value's syntax, followed
// across its lines, says whether it can go on with this line: only a syntax
// error says it cannot. Following it costs each byte once, however many such
// lines there are.
func (r *reader) maybeNew(ln int, line []byte) bool {
	v := r.val
	r.val.syn.feed(newline)
	r.val.syn.feed(line)
	switch {
	case r.val.syn.failed:
		r.val = value{}
		return r.emitValue(v.start, v.buf) && r.begin(ln, line)
	case len(v.buf)+1+len(line) > MaxLineBytes:
		r.tooLong(ln)
		return true
	}
	return r.extend(ln, line)
}

var newline = []byte{'\n'}

// extend adds line ln, already given to its syntax, to the open value.
func (r *reader) extend(ln int, line []byte) bool {
	v := &r.val
	v.last = len(v.buf) + 1
	v.buf = append(append(v.buf, '\n'), line...)
	return r.settle(ln, v.last)
}

// settle scans the open value from buf[from:], the part line ln added, and
// sends it if it is complete; the rest of the line starts the next value.
func (r *reader) settle(ln, from int) bool {
	v := &r.val
	end, bad := v.sh.scan(v.buf[from:])
	switch {
	case bad:
		return r.malformed(ln, true)
	case end < 0 && v.sh.inStr:
		return r.malformed(ln, false)
	case end < 0:
		if !v.fed {
			v.syn.feed(v.buf)
			v.fed = true
		}
		return true
	}
	end += from
	data, rest := v.buf, v.buf[end:]
	if !isBlank(rest) {
		data = v.buf[:end:end]
	}
	start := v.start
	r.val = value{}
	if !r.emitValue(start, data) {
		return false
	}
	return isBlank(rest) || r.begin(ln, rest)
}

// malformed handles a value whose structure line ln broke: it is reported,
// and as where it ends is unknown, the reader skips to the next line that
// starts a value. For brackets that do not match, the decoder says what is
// wrong first; a string cut by a line end is told as such (the decoder,
// given the value without that line end, would say only that it ends early).
func (r *reader) malformed(ln int, brackets bool) bool {
	v := r.val
	r.val = value{}
	it := r.item(v.start, v.buf)
	msg := fmt.Sprintf("invalid JSON at line %d: a line ends inside a string", ln)
	if brackets {
		it = r.value(v.start, v.buf)
		msg = fmt.Sprintf("invalid JSON at line %d: brackets do not match", ln)
	}
	if it.Err != nil {
		msg = it.Err.Error()
	} else if v.start != ln {
		it.Err = problem(msg)
	}
	r.skip = &skipping{it: it, msg: msg}
	return true
}

// endSkip sends the bad value that started the skip, saying where reading
// resumed: at the next line (atEOF false) or nowhere.
func (r *reader) endSkip(atEOF bool) bool {
	s := r.skip
	r.skip = nil
	switch {
	case !s.skipped:
	case atEOF:
		s.it.Err = problem(s.msg + "; the rest of the file is unreadable (no later line starts with { or [)")
	default:
		s.it.Err = problem(fmt.Sprintf("%s; skipped to line %d, the next that starts with { or [", s.msg, r.src.line))
	}
	return r.send(s.it)
}

// shape follows the brackets and strings of a value, a byte at a time across
// the lines given to it, to tell where the value ends.
type shape struct {
	open       []byte // the brackets open, innermost last
	inStr, esc bool
}

// scan follows b and returns where in it the value ends (-1: not in b), or
// bad when a bracket closes what it does not match.
func (s *shape) scan(b []byte) (end int, bad bool) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case s.esc:
			s.esc = false
		case s.inStr:
			s.inStr, s.esc = c != '"', c == '\\'
		case c == '"':
			s.inStr = true
		case c == '{' || c == '[':
			s.open = append(s.open, c)
		case c == '}' || c == ']':
			n := len(s.open)
			if n == 0 || s.open[n-1] != c-2 { // '{' is '}'-2, '[' is ']'-2
				return i, true
			}
			s.open = s.open[:n-1]
			if n == 1 {
				return i + 1, false
			}
		}
	}
	return -1, false
}

func (r *reader) at(line int) ingest.Source { return ingest.Source{File: r.name, Line: line} }

// item is an input as read: its Data, and what is wrong with its bytes.
func (r *reader) item(line int, data []byte) ingest.Item {
	return ingest.Item{Src: r.at(line), Data: data, Err: checkLine(data, len(data))}
}

// value is item for a value that may span lines: when it is not valid JSON,
// the error says on which line, which the pipeline's byte offset would not.
func (r *reader) value(start int, data []byte) ingest.Item {
	it := r.item(start, data)
	if it.Err != nil || lines(data) == 0 || json.Valid(data) {
		return it
	}
	_, err := firstValue(data)
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		at := start + lines(data[:max(syn.Offset-1, 0)])
		it.Err = problem(fmt.Sprintf("invalid JSON at line %d: %s", at, syn.Error()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		it.Err = problem(fmt.Sprintf("invalid JSON: unexpected end of JSON input at line %d", start+lines(data)))
	case err == nil:
		it.Err = problem(fmt.Sprintf("invalid JSON at line %d: more after the value", start+lines(data[:len(bytes.TrimRight(data, " \t\r\n"))])))
	}
	return it
}

func (r *reader) emit(line int, data []byte) bool { return r.send(r.item(line, data)) }

func (r *reader) emitValue(start int, data []byte) bool { return r.send(r.value(start, data)) }

func (r *reader) send(it ingest.Item) bool { return send(r.ctx, r.out, it) }

func send(ctx context.Context, out chan<- ingest.Item, it ingest.Item) bool {
	select {
	case out <- it:
		return true
	case <-ctx.Done():
		return false
	}
}

func problem(msg string) error { return model.Problems{{Reason: msg}} }

func lines(b []byte) int { return bytes.Count(b, []byte{'\n'}) }

// nonSpace returns the index of b's first byte that is not JSON
// whitespace, or -1.
func nonSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return -1
}

// isBlank is true of a line of JSON whitespace only; other space
// characters (form feed, …) are not JSON, so they are reported.
func isBlank(b []byte) bool { return len(bytes.Trim(b, " \t\r\n")) == 0 }
