package source_test

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// dump is everything Read makes of r, as text.
func dump(r io.Reader) []string {
	items, err := readItems(r)
	var out []string
	for _, it := range items {
		s := fmt.Sprintf("%d:%q", it.Src.Line, it.Data)
		if it.Err != nil {
			s += " ERR " + it.Err.Error()
		}
		out = append(out, s)
	}
	if err != nil {
		out = append(out, "READ ERR "+err.Error())
	}
	return out
}

// FuzzReadChunked: what Read makes of an input does not depend on how the
// input arrives (a file, a pipe giving one byte at a time). One exception
// by design: the not-text check looks only at what the first read brings,
// so that a stream sending a line at a time is never kept waiting; an input
// a whole read refuses as not text is left out (the per-line check, which
// does not depend on chunking, still stops it when it arrives bytewise).
func FuzzReadChunked(f *testing.F) {
	for _, s := range []string{
		ev("a") + "\n" + ev("b"), "[" + ev("a") + "]\n" + ev("b"), "{\"eventId\":\"t0\",\n" + ev("t1"),
		"{\n  \"eventId\": ,\n}\n{\n}", "[{\"a\":1}, {\"b\" 2}]\n  ]\n", "{\"a\":\"x\n}\n[", "}{\n]\n[\n{",
		"[\n{\"a\":1}\n,\n{\"b\":2}]\n{\"c\":1} [1]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		whole := dump(strings.NewReader(input))
		if len(whole) == 1 && strings.Contains(whole[0], ": not text: ") && strings.Contains(whole[0], "nothing read from it") {
			t.Skip("refused as not text by its first read")
		}
		if bytes := dump(iotest.OneByteReader(strings.NewReader(input))); !reflect.DeepEqual(whole, bytes) {
			t.Errorf("input %q\nwhole:       %q\nbyte a time: %q", input, whole, bytes)
		}
	})
}
