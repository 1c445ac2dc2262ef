package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

var errNotObject = errors.New("expected a JSON object")

// splitValid reads the members of the JSON object raw in order without
// interpreting their values; each value is the member's bytes as they are
// in raw. raw must be valid JSON (a decoded event's bytes and their parts):
// then one scan of the bytes is all it takes, where encoding/json's
// Decoder, token by token, cost a third of an event's decoding.
func splitValid(raw []byte) (object, error) {
	obj := make(object, 0, 8)
	var nameErr error
	err := eachMember(raw, func(quoted, value []byte) bool {
		var name string
		if name, nameErr = memberName(quoted); nameErr != nil {
			return false
		}
		obj = append(obj, member{name, value})
		return true
	})
	if err == nil {
		err = nameErr
	}
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// eachMember calls fn with the quoted name and the value of each member of
// the valid JSON object raw, in order, until fn returns false.
func eachMember(raw []byte, fn func(quoted, value []byte) bool) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errNotObject
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for i < len(raw) {
		end := endOfString(raw, i)
		quoted := raw[i:end]
		i = skipSpace(raw, skipSpace(raw, end)+1) // past ':'
		end = endOfValue(raw, i)
		if !fn(quoted, raw[i:end:end]) {
			return nil
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ',' {
			break // '}': valid JSON leaves nothing else
		}
		i = skipSpace(raw, i+1)
	}
	return nil
}

// memberName decodes a quoted member name, quickly when it has no escapes
// and is valid UTF-8 (encoding/json turns invalid bytes into U+FFFD).
func memberName(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		bare := quoted[1 : len(quoted)-1]
		if name, ok := knownNames[string(bare)]; ok {
			return name, nil // no copy: the lookup does not allocate
		}
		return string(bare), nil
	}
	var s string
	err := json.Unmarshal(quoted, &s)
	return s, err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfString returns the index just past the string that starts at b[i].
// It jumps from quote to quote (bytes.IndexByte, vectorised) rather than
// stepping through every byte: a quote ends the string unless an odd run
// of backslashes comes before it. Long text (reasoning, outputs) made the
// byte loop an eighth of ArchiveJSON.
func endOfString(b []byte, i int) int {
	for i++; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		j := i + q
		k := j
		for k > i && b[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
}

// endOfValue returns the index just past the value that starts at b[i].
func endOfValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = endOfString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// compactValid appends valid JSON src to dst without its insignificant white
// space, as json.Compact does, in one plain pass.
func compactValid(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := endOfString(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
