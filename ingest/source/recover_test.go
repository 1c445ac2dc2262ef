package source_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"engram/ingest"
	"engram/ingest/source"
	"engram/model"
)

// outcomes reads input and renders each item as "LINE:ID" when it is an
// event, or "LINE!REASON" when it is rejected, whether by Read (Err) or by
// the pipeline's decoder (bad Data): what a user would see.
func outcomes(t *testing.T, input string) []string {
	t.Helper()
	var out []string
	for _, it := range readAll(t, input) {
		if it.err == "" {
			if _, err := model.Decode([]byte(it.data), model.DecodeOptions{}); err != nil {
				it.err = err.Error()
			}
		}
		if it.err != "" {
			out = append(out, fmt.Sprintf("%d!%s", it.line, it.err))
			continue
		}
		var ev struct {
			EventID string `json:"eventId"`
		}
		if err := json.Unmarshal([]byte(it.data), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%s", it.line, ev.EventID))
	}
	return out
}

// matches checks got against want, where "LINE:ID" must be equal and
// "LINE!TEXT|TEXT…" must be a rejection on that line whose reason contains
// each TEXT.
func matches(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		g := got[i]
		if line, text, bad := strings.Cut(w, "!"); bad {
			if !strings.HasPrefix(g, line+"!") {
				return false
			}
			for _, part := range strings.Split(text, "|") {
				if !strings.Contains(g, part) {
					return false
				}
			}
		} else if g != w {
			return false
		}
	}
	return true
}

func ev(id string) string { return `{"eventId":"` + id + `"}` }

func TestReadRecovers(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		// 1: arrays followed by more data, unterminated, trailing garbage.
		{"array then json lines", "[" + ev("x1") + "]\n" + ev("x2") + "\n" + ev("x3") + "\n",
			[]string{"1:x1", "2:x2", "3:x3"}},
		{"arrays and objects mixed", "[\n  " + ev("a") + ",\n  " + ev("b") + "\n]\n[" + ev("c") + "]\n{\n  \"eventId\": \"d\"\n}\n",
			[]string{"2:a", "3:b", "5:c", "6:d"}},
		{"array mid json lines", ev("a") + "\n[" + ev("b") + "," + ev("c") + "]\n" + ev("d"),
			[]string{"1:a", "2:b", "2:c", "3:d"}},
		{"array not closed", "[" + ev("x1") + ",\n" + ev("x2") + "\n",
			[]string{"1:x1", "2:x2", "1!the JSON array opened at line 1 is not closed: the file ends at line 2"}},
		{"array cut inside an element", "[" + ev("x1") + ",\n{\"eventId\":",
			[]string{"1:x1", "2!the file ends inside this array element"}},
		{"garbage after array on its line", "[" + ev("x1") + "] garbage\n" + ev("x2") + "\n",
			[]string{"1:x1", "1!expected a JSON object", "2:x2"}},
		{"garbage line after array", "[" + ev("x1") + "]\n]\n" + ev("x2"),
			[]string{"1:x1", "2!expected a JSON object", "3:x2"}},
		{"bad element, later values read", "[\n  " + ev("a") + ",\n  {\"eventId\" \"b\"},\n  " + ev("c") + "\n]\n" + ev("d") + "\n",
			[]string{"2:a", "3!invalid JSON in an array element: invalid character '\"' after object key; skipped to line 6", "6:d"}},
		{"bad element at the end", "[" + ev("a") + ", {\"b\" 2}]\n  ]\n",
			[]string{"1:a", "1!the rest of the file is unreadable"}},

		// 2: a truncated JSON Lines line, first or not.
		{"truncated first line", "{\"eventId\":\"t0\",\n" + ev("t1") + "\n" + ev("t2") + "\n",
			[]string{"1!unexpected end of JSON input", "2:t1", "3:t2"}},
		{"truncated inside a string", ev("a") + "\n{\"eventId\":\"b\",\"input\":{\"text\":\"cu\n" + ev("c") + "\n",
			[]string{"1:a", "2!unexpected end of JSON input", "3:c"}},
		{"two truncated lines", "{\"eventId\":\"a\",\n{\"eventId\":\"b\",\n\n" + ev("c"),
			[]string{"1!unexpected end", "2!unexpected end", "4:c"}},
		{"bad lines between good", ev("a") + "\n{\"eventId\":,}\n" + ev("b") + "\n\f\n" + ev("c") + "\n",
			[]string{"1:a", "2!invalid character ','", "3:b", "4!expected a JSON object", "5:c"}},

		// 3: a bad pretty-printed object among good ones.
		{"bad pretty object", "{\n  \"eventId\": \"a\"\n}\n{\n  \"eventId\": ,\n  \"x\": 1\n}\n{\n  \"eventId\": \"c\"\n}\n",
			[]string{"1:a", "4!invalid JSON at line 5: invalid character ','", "8:c"}},
		{"bad pretty object last", "{\n  \"eventId\": \"a\"\n}\n{\n  \"eventId\": ,\n  \"x\": 1\n}\n",
			[]string{"1:a", "4!invalid JSON at line 5"}},
		{"bad first line of a pretty object", "{ \"eventId\": ,\n  \"x\": 1\n}\n" + ev("b") + "\n",
			[]string{"1!invalid JSON at line 1: invalid character ','", "4:b"}},
		{"string not closed in a pretty object", "{\n  \"eventId\": \"a,\n  \"x\": 1\n}\n{\n  \"eventId\": \"b\"\n}\n",
			[]string{"1!invalid JSON at line 2: a line ends inside a string; skipped to line 5", "5:b"}},
		{"brackets not matching in a pretty object", "{\n  \"tags\": [\"a\"}\n  \"x\": 1\n}\n" + ev("b") + "\n",
			[]string{"1!invalid JSON at line 2: invalid character '}' after array element|skipped to line 5", "5:b"}},
		{"string not closed on a line", "{\"eventId\":\"a\",\"text\":\"cut\n  more\"}\n" + ev("b"),
			[]string{"1!a line ends inside a string|skipped to line 3", "3:b"}},
		{"brackets not matching at the end", ev("a") + "\n{\n\"tags\": [}\n",
			[]string{"1:a", "2!invalid JSON at line 3: invalid character '}'"}},
		// A cut line whose next line happens to continue it validly takes
		// that line with it, reported as part of the cut input.
		{"cut line continued by the next", "{\"eventId\":\"a\",\"tags\":[\n" + ev("b") + "\n" + ev("c") + "\n",
			[]string{"1!unexpected end of JSON input at line 2", "3:c"}},
		{"pretty object cut short", "{\n  \"eventId\": \"a\",\n{\n  \"eventId\": \"b\"\n}\n",
			[]string{"1!unexpected end of JSON input", "3:b"}},
		{"pretty object cut at the end", "{\n  \"eventId\": \"a\"\n}\n{\n  \"eventId\": \"b\",\n",
			[]string{"1:a", "4!unexpected end of JSON input"}},

		// 4: compact and pretty-printed objects mixed.
		{"compact then pretty", ev("a") + "\n{\n  \"eventId\": \"b\"\n}\n" + ev("c") + "\n{\n\"eventId\":\"d\"}",
			[]string{"1:a", "2:b", "5:c", "6:d"}},
		{"objects sharing lines", ev("a") + " " + ev("b") + "\n{\n\"eventId\":\"c\"\n}{\n\"eventId\":\"d\"\n}\n",
			[]string{"1:a", "1:b", "2:c", "4:d"}},
		{"object then array on one line", ev("a") + " [" + ev("b") + "]\n" + ev("c"),
			[]string{"1:a", "1:b", "2:c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcomes(t, tt.input); !matches(got, tt.want) {
				t.Errorf("got\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

// A value assembled from lines is bounded like a line: past the limit it is
// rejected, not held, and reading resumes at the next value.
func TestReadLongPrettyValueIsRejected(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\n  \"eventId\": \"big\",\n")
	field := strings.Repeat("x", 1<<20)
	for i := range 5 {
		fmt.Fprintf(&b, "  \"f%d\": %q,\n", i, field)
	}
	b.WriteString("  \"end\": 1\n}\n" + ev("after") + "\n")
	got := outcomes(t, b.String())
	want := []string{"1!value is longer than the 4194304-byte limit at line 6|skipped to line 10", "10:after"}
	if !matches(got, want) {
		t.Errorf("got %.300q, want %q", got, want)
	}
}

// A line of exactly MaxLineBytes is accepted, not dropped.
func TestReadLineOfExactlyTheLimit(t *testing.T) {
	pre, suf := `{"eventId":"big","t":"`, `"}`
	exact := pre + strings.Repeat("x", source.MaxLineBytes-len(pre)-len(suf)) + suf
	got := outcomes(t, exact+"\n"+ev("after")+"\n")
	if want := []string{"1:big", "2:after"}; !matches(got, want) {
		t.Errorf("got %.300q, want %q", got, want)
	}
}

// An array is streamed: one on a single line longer than MaxLineBytes is
// read element by element, not rejected as a long line.
func TestReadArrayOnOneLongLine(t *testing.T) {
	const n = 60000
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"eventId":"e%d","pad":%q}`, i, strings.Repeat("p", 60))
	}
	b.WriteString("]\n" + ev("after"))
	if b.Len() <= source.MaxLineBytes {
		t.Fatalf("test input is only %d bytes", b.Len())
	}
	got := outcomesFrom(t, strings.NewReader(b.String()))
	if len(got) != n+1 || got[0] != "1:e0" || got[n-1] != fmt.Sprintf("1:e%d", n-1) || got[n] != "2:after" {
		t.Errorf("got %d items, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}

func TestReadStopsWhenCancelled(t *testing.T) {
	for _, input := range []string{ev("a") + "\n" + ev("b"), "[" + ev("a") + "," + ev("b") + "]"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := source.Read(ctx, strings.NewReader(input), "f", make(chan ingest.Item))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%q: Read = %v, want context.Canceled", input, err)
		}
	}
}

// FuzzRead: whatever the input, Read ends without error, each item is
// located on a line of the input, and input other than blanks and empty
// arrays yields at least one item (nothing is dropped without a trace).
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		ev("a") + "\n" + ev("b"), "[" + ev("a") + "]\n" + ev("b"), "{\"eventId\":\"t0\",\n" + ev("t1"),
		"{\n  \"eventId\": ,\n}\n{\n}", "[{\"a\":1}, {\"b\" 2}]\n  ]\n", "{\"a\":\"x\n}\n[", "}{\n]\n[\n{",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		ch := make(chan ingest.Item)
		errc := make(chan error, 1)
		go func() {
			errc <- source.Read(context.Background(), strings.NewReader(input), "f", ch)
			close(ch)
		}()
		n, last := 0, strings.Count(input, "\n")+1
		for it := range ch {
			n++
			if it.Src.Line < 1 || it.Src.Line > last {
				t.Errorf("item on line %d of %d", it.Src.Line, last)
			}
			if it.Err == nil && len(it.Data) == 0 {
				t.Errorf("line %d: an item with neither data nor error", it.Src.Line)
			}
		}
		err := <-errc
		if errors.Is(err, source.ErrNotText) {
			return // refused whole or stopped part-way, by design
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && strings.ReplaceAll(strings.Map(dropSpace, strings.TrimPrefix(input, "\xef\xbb\xbf")), "[]", "") != "" {
			t.Errorf("no item for %q", input)
		}
	})
}

func dropSpace(r rune) rune {
	if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
		return -1
	}
	return r
}
