package source

import (
	"bytes"
	"encoding/json"
	"engram/ingest"
	"errors"
	"fmt"
	"io"
	"strings"
)

// readArray streams the elements of the array that starts the next line,
// then leaves what follows its "]" for the line reader.
func (r *reader) readArray() error {
	a := &arrayRead{base: r.src.line - 1, open: r.src.line}
	a.lc = &lineCounter{r: r.src}
	a.lim = &capReader{lc: a.lc, stop: noCap}
	a.dec = json.NewDecoder(a.lim)
	if _, err := a.dec.Token(); err != nil {
		return fmt.Errorf("%s:%d: %w", r.name, a.open, err)
	}
	for {
		a.lim.stop = noCap // space between elements is not kept: no limit
		if !a.dec.More() {
			break
		}
		// The element may take the limit, past the space before it.
		a.lim.stop = a.offset(a.dec.InputOffset()) + MaxLineBytes + elementSlack
		var v json.RawMessage
		err := a.dec.Decode(&v)
		switch {
		case err == io.EOF: // only space after a comma
			return r.unclosed(a.open, a.base+skipSpace(a.dec, a.lc, a.shift))
		case errors.Is(err, errElementTooLong):
			if done, err := r.rescue(a); done {
				return err
			}
			continue
		case err != nil:
			// The decoder has read at least up to the element's first byte.
			return r.badElement(a.dec, a.lc, a.base, a.shift, err)
		}
		// The element ends where the decoder is: how much of the input it
		// had read before (the element's start) depends on read sizes.
		start := a.base + a.lc.lineAt(a.offset(a.dec.InputOffset()-int64(len(v))))
		if !r.send(ingest.Item{Src: r.at(start), Data: v, Err: checkLine(v, len(v))}) {
			return r.ctx.Err()
		}
	}
	end := a.base + a.lc.lineAt(a.offset(a.dec.InputOffset()))
	tok, err := a.dec.Token()
	switch {
	case err == nil && tok == json.Delim(']'):
		left, _ := io.ReadAll(a.dec.Buffered())
		r.src.resume(end, left)
		return nil
	case err == io.EOF:
		return r.unclosed(a.open, end)
	}
	return r.badElement(a.dec, a.lc, a.base, a.shift, err)
}

func (r *reader) unclosed(open, end int) error {
	msg := fmt.Sprintf("the JSON array opened at line %d is not closed: the file ends at line %d", open, end)
	r.send(ingest.Item{Src: r.at(open), Err: problem(msg)})
	return r.ctx.Err()
}

// badElement reports an array element (or what stands in its place) that is
// not valid, and skips to the next line, after the one with the error, that
// starts a value: the array's structure is lost, so its remaining elements
// cannot be found. Lines before the error were part of the element, so
// they are not read again: with nested arrays opened line after line, that
// would report the same error once per line, parsing the rest each time.
func (r *reader) badElement(dec *json.Decoder, lc *lineCounter, base int, shift int64, err error) error {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		line := base + skipSpace(dec, lc, shift)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			r.send(ingest.Item{Src: r.at(line), Err: problem("invalid JSON: the file ends inside this array element")})
			return r.ctx.Err()
		}
		return fmt.Errorf("%s:%d: %w", r.name, line, err)
	}
	// The decoder has read at least up to the byte in error: the element's
	// syntax, followed again, says where it is; unless a comma was due, at
	// the first byte.
	left, _ := io.ReadAll(dec.Buffered())
	at := 0
	if !strings.HasPrefix(syn.Error(), "expected comma") {
		at = errorAt(left)
	}
	off := shift + dec.InputOffset()
	first := off + int64(min(spaceOrComma(left), at)) // the element's first byte
	line := base + lc.lineAt(first)
	msg := "invalid JSON in an array element: " + syn.Error()
	r.skip = &skipping{it: ingest.Item{Src: r.at(line), Err: problem(msg)}, msg: msg, skipped: true}
	r.src.resume(base+lc.lineAt(off+int64(at)), left[at:])
	// The rest of the error's line is part of the element: never resume there.
	if _, _, err := r.src.readLine(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s:%d: %w", r.name, line, err)
	}
	return nil
}

// spaceOrComma returns how many bytes of b are space or commas.
func spaceOrComma(b []byte) int {
	for i, c := range b {
		if !isSpaceOrComma(c) {
			return i
		}
	}
	return len(b)
}

func isSpaceOrComma(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ','
}

// firstValue returns where the first JSON value in buf ends, or the
// decoder's error: io.ErrUnexpectedEOF when buf is only its beginning.
func firstValue(buf []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(buf))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return 0, err
	}
	return int(dec.InputOffset()), nil
}
