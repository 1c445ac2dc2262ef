package source_test

import (
	"engram/ingest/source"
	"strings"
	"testing"
)

type readItem struct {
	line int
	data string
	err  string
}

func readAll(t *testing.T, input string) []readItem {
	t.Helper()
	items, err := readItems(strings.NewReader(input))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	var out []readItem
	for _, it := range items {
		ri := readItem{line: it.Src.Line, data: string(it.Data)}
		if it.Err != nil {
			ri.err = it.Err.Error()
		}
		out = append(out, ri)
	}
	return out
}

func TestReadFormats(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []readItem
	}{
		{"json lines with blank lines", "{\"a\":1}\n\n{\"b\":2}\n", []readItem{{1, `{"a":1}`, ""}, {3, `{"b":2}`, ""}}},
		{"crlf line ends", "{\"a\":1}\r\n{\"b\":2}\r\n", []readItem{{1, "{\"a\":1}\r", ""}, {2, "{\"b\":2}\r", ""}}},
		{"byte-order mark at start", "\xef\xbb\xbf{\"a\":1}\n", []readItem{{1, `{"a":1}`, ""}}},
		{"byte-order mark mid-file", "{\"a\":1}\n\xef\xbb\xbf{\"b\":2}\n", []readItem{{1, `{"a":1}`, ""}, {2, "\xef\xbb\xbf{\"b\":2}", "byte-order mark"}}},
		{"invalid utf-8", "{\"a\":\"\xff\"}\n{\"b\":2}", []readItem{{1, "{\"a\":\"\xff\"}", "invalid UTF-8 at byte 6"}, {2, `{"b":2}`, ""}}},
		{"truncated last line", "{\"a\":1}\n{\"b\":", []readItem{{1, `{"a":1}`, ""}, {2, `{"b":`, ""}}},
		{"malformed first line", "{\"a\":,}\n{\"b\":2}\n", []readItem{{1, `{"a":,}`, ""}, {2, `{"b":2}`, ""}}},
		{"array with line numbers", "[\n  {\"a\":1},\n  {\"b\":\n 2}\n,{\"c\":3}]", []readItem{{2, `{"a":1}`, ""}, {3, "{\"b\":\n 2}", ""}, {5, `{"c":3}`, ""}}},
		{"pretty object", "{\n  \"a\": 1\n}\n", []readItem{{1, "{\n  \"a\": 1\n}", ""}}},
		{"two pretty objects", "{\n\"a\": 1\n}\n{\n\"b\": 2\n}", []readItem{{1, "{\n\"a\": 1\n}", ""}, {4, "{\n\"b\": 2\n}", ""}}},
		{"broken array element", "[{\"a\":1}, {\"b\" 2}]", []readItem{{1, `{"a":1}`, ""}, {1, "", "rest of the file is unreadable"}}},
		{"empty", "  \n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAll(t, tt.input)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d items %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.line != w.line || (w.err == "" && g.data != w.data) || (w.err == "") != (g.err == "") || !strings.Contains(g.err, w.err) {
					t.Errorf("item %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestReadLongLineIsSkippedNotKept(t *testing.T) {
	long := `{"t":"` + strings.Repeat("x", source.MaxLineBytes) + `"}`
	got := readAll(t, "{\"a\":1}\n"+long+"\n{\"b\":2}\n")
	if len(got) != 3 || got[1].line != 2 || !strings.Contains(got[1].err, "longer than") || got[1].data != "" || got[2].data != `{"b":2}` {
		t.Fatalf("got %d items; second %+v", len(got), got[1].err)
	}
}
