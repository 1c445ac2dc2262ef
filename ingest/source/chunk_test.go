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
// input arrives (a file, a pipe giving one byte at a time).
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
		if bytes := dump(iotest.OneByteReader(strings.NewReader(input))); !reflect.DeepEqual(whole, bytes) {
			t.Errorf("input %q\nwhole:       %q\nbyte a time: %q", input, whole, bytes)
		}
	})
}
