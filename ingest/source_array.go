package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// readArray streams the elements of the array that starts the next line,
// then leaves what follows its "]" for the line reader.
func (r *reader) readArray() error {
	base, open := r.src.line-1, r.src.line
	lc := &lineCounter{r: r.src}
	dec := json.NewDecoder(lc)
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s:%d: %w", r.name, open, err)
	}
	for dec.More() {
		start := base + skipSpace(dec, lc)
		var v json.RawMessage
		if err := dec.Decode(&v); err == io.EOF { // only space after a comma
			return r.unclosed(open, start)
		} else if err != nil {
			return r.badElement(dec, start, err)
		}
		if !r.send(Item{Src: r.at(start), Data: v, Err: checkLine(v, len(v))}) {
			return r.ctx.Err()
		}
	}
	end := base + lc.lineAt(dec.InputOffset())
	tok, err := dec.Token()
	switch {
	case err == nil && tok == json.Delim(']'):
		r.src.resume(end, dec.Buffered())
		return nil
	case err == io.EOF:
		return r.unclosed(open, end)
	}
	return r.badElement(dec, end, err)
}

func (r *reader) unclosed(open, end int) error {
	msg := fmt.Sprintf("the JSON array opened at line %d is not closed: the file ends at line %d", open, end)
	r.send(Item{Src: r.at(open), Err: problem(msg)})
	return r.ctx.Err()
}

// badElement reports an array element (or what stands in its place) that is
// not valid, and skips to the next line that starts a value: the array's
// structure is lost, so its remaining elements cannot be found.
func (r *reader) badElement(dec *json.Decoder, line int, err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.send(Item{Src: r.at(line), Err: problem("invalid JSON: the file ends inside this array element")})
		return r.ctx.Err()
	case !errors.As(err, &syn):
		return fmt.Errorf("%s:%d: %w", r.name, line, err)
	}
	msg := "invalid JSON in an array element: " + syn.Error()
	r.skip = &skipping{it: Item{Src: r.at(line), Err: problem(msg)}, msg: msg, skipped: true}
	r.src.resume(line, trimSpace(dec.Buffered()))
	// The rest of the element's line is part of it: never resume there.
	if _, _, err := r.src.readLine(); err != nil && err != io.EOF {
		return fmt.Errorf("%s:%d: %w", r.name, line, err)
	}
	return nil
}

// trimSpace passes over what the decoder left before the failed element, so
// that what remains starts on the element's line.
func trimSpace(rd io.Reader) io.Reader {
	br := bufio.NewReader(rd)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return br
		}
		if !isSpaceOrComma(c) {
			br.UnreadByte()
			return br
		}
	}
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
