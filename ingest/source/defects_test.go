package source_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"engram/ingest"
	"engram/ingest/source"
)

// readItems is every item Read makes of r, and Read's error.
func readItems(r io.Reader) ([]ingest.Item, error) {
	ch := make(chan ingest.Item)
	errc := make(chan error, 1)
	go func() { errc <- source.Read(context.Background(), r, "f", ch); close(ch) }()
	var items []ingest.Item
	for it := range ch {
		items = append(items, it)
	}
	return items, <-errc
}

// outcomesFrom is outcomes for a reader, with events rendered as
// "LINE:ID" and rejections as "LINE!REASON", without the pipeline's decoder.
func outcomesFrom(t *testing.T, r io.Reader) []string {
	t.Helper()
	items, err := readItems(r)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	var out []string
	for _, it := range items {
		if it.Err != nil {
			out = append(out, fmt.Sprintf("%d!%v", it.Src.Line, it.Err))
			continue
		}
		var e struct{ EventID string }
		if err := json.Unmarshal(it.Data, &e); err != nil {
			out = append(out, fmt.Sprintf("%d!%v", it.Src.Line, err))
			continue
		}
		out = append(out, fmt.Sprintf("%d:%s", it.Src.Line, e.EventID))
	}
	return out
}

// allocated returns the bytes allocated while running f.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A cut line followed by a line of up to the limit: the line is its own
// input, not part of a value rejected as too long.
func TestReadCutLineThenLineOfTheLimit(t *testing.T) {
	pre, suf := `{"eventId":"big","t":"`, `"}`
	big := pre + strings.Repeat("x", source.MaxLineBytes-len(pre)-len(suf)) + suf
	in := "{\"eventId\":\"cut\",\n" + big + "\n" + ev("c") + "\n"
	got := outcomes(t, in)
	if want := []string{"1!unexpected end of JSON input", "2:big", "3:c"}; !matches(got, want) {
		t.Errorf("got %.300q, want %q", got, want)
	}
}

// A cut line followed by an array on one line longer than the limit: the
// array is streamed, not swallowed.
func TestReadCutLineThenLongArray(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\"eventId\":\"cut\",\n[")
	n := 0
	for ; b.Len() < 5<<20; n++ {
		if n > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"eventId":"e%d"}`, n)
	}
	b.WriteString("]\n" + ev("after") + "\n")
	got := outcomesFrom(t, strings.NewReader(b.String()))
	if len(got) != n+2 || !strings.HasPrefix(got[0], "1!") || got[1] != "2:e0" ||
		got[n] != fmt.Sprintf("2:e%d", n-1) || got[n+1] != "3:after" {
		t.Errorf("got %d items (want %d), first %.200q, last %.200q", len(got), n+2, got[:min(2, len(got))], got[max(len(got)-2, 0):])
	}
}

// Array elements are located on their own lines however the input arrives.
func TestReadArrayLinesDoNotDependOnChunking(t *testing.T) {
	inputs := []string{
		"[\n{\"eventId\":\"a\"},\n{\"eventId\":\"b\"},\n{\"eventId\":\"c\"}\n]\n" + ev("d"),
		"[\n\n  {\"eventId\":\"a\"}\n  ,\n\n{\"eventId\":\"b\"}\n,{\"eventId\":\"c\"}\n]\n" + ev("d"),
	}
	wants := [][]string{{"2:a", "3:b", "4:c", "6:d"}, {"3:a", "6:b", "7:c", "9:d"}}
	for i, in := range inputs {
		for name, r := range map[string]io.Reader{
			"whole":    strings.NewReader(in),
			"one byte": iotest.OneByteReader(strings.NewReader(in)),
			"half":     iotest.HalfReader(strings.NewReader(in)),
		} {
			if got := outcomesFrom(t, r); !matches(got, wants[i]) {
				t.Errorf("%d %s: got %q, want %q", i, name, got, wants[i])
			}
		}
	}
	// A large array read through the decoder in many chunks.
	var b strings.Builder
	b.WriteString("[\n")
	for i := range 5000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"eventId":"%d","p":%q}`, i+2, strings.Repeat("p", i%700))
	}
	b.WriteString("\n]\n")
	for _, s := range outcomesFrom(t, strings.NewReader(b.String())) {
		line, id, _ := strings.Cut(s, ":")
		if line != id {
			t.Fatalf("element %s on line %s", id, line)
		}
	}
}

// However many lines open a value in the first column inside an open value,
// a cut is still found and the events after it are read.
func TestReadCutFoundAfterManyFirstColumnLines(t *testing.T) {
	in := "{\"eventId\":\"a\",\"t\":[\n" + strings.Repeat("{},\n", 20) + "{\"eventId\":\"cut\",\n" +
		ev("b") + "\n" + ev("c") + "\n" + ev("d") + "\n"
	got := outcomes(t, in)
	if want := []string{"1!unexpected end of JSON input", "23:b", "24:c", "25:d"}; !matches(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Objects and arrays alternating on one long line take linear time: the
// rest of the line is not copied for each of them.
func TestReadMixedLongLineIsLinear(t *testing.T) {
	const n = 16000
	in := strings.Repeat(`{"eventId":"a"} [{"eventId":"b"}] `, n) + "\n"
	var got []string
	a := allocated(func() { got = outcomesFrom(t, strings.NewReader(in)) })
	if len(got) != 2*n || got[0] != "1:a" || got[2*n-1] != "1:b" {
		t.Fatalf("got %d items, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	if a > 400*uint64(len(in)) {
		t.Errorf("allocated %d bytes for %d bytes of input", a, len(in))
	}
}

// A bad nested array opened line after line is one error, not one per line
// re-parsed from each, and the events after it are read.
func TestReadBadNestedArrayIsOneError(t *testing.T) {
	const d = 4000
	in := strings.Repeat("[\n", d) + "x\n" + ev("after") + "\n"
	var got []string
	a := allocated(func() { got = outcomesFrom(t, strings.NewReader(in)) })
	want := []string{fmt.Sprintf("2!invalid JSON in an array element|skipped to line %d", d+2), fmt.Sprintf("%d:after", d+2)}
	if !matches(got, want) {
		t.Errorf("got %d items %.300q, want %q", len(got), got, want)
	}
	if a > 2000*uint64(len(in)) {
		t.Errorf("allocated %d bytes for %d bytes of input", a, len(in))
	}
}

// A bad array element is reported, and reading resumed, the same way
// however the input arrives (the decoder's error offsets are relative to
// the element, or, for a missing comma, to the input).
func TestReadBadElementDoesNotDependOnChunking(t *testing.T) {
	for _, in := range []string{"[10A\n{", "[{},A\n{", "[{},\n  {\"a\":\n[1 2]}\n" + ev("b"), "[,\n{", "[\n1,\n{\"a\" 1},\n" + ev("b") + "\n", "[1 2\n" + ev("b")} {
		whole := outcomesFrom(t, strings.NewReader(in))
		one := outcomesFrom(t, iotest.OneByteReader(strings.NewReader(in)))
		if fmt.Sprint(whole) != fmt.Sprint(one) {
			t.Errorf("%q:\nwhole    %q\none byte %q", in, whole, one)
		}
	}
}
