package source_test

import (
	"engram/ingest/source"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// repeat is n bytes of c, made as they are read (never held whole).
func repeat(c byte, n int64) io.Reader { return io.LimitReader(repeatByte(c), n) }

type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func readerOf(parts ...any) io.Reader {
	rs := make([]io.Reader, len(parts))
	for i, p := range parts {
		switch p := p.(type) {
		case string:
			rs[i] = strings.NewReader(p)
		case io.Reader:
			rs[i] = p
		}
	}
	return io.MultiReader(rs...)
}

// An array element over the limit is reported, not held, and the elements
// after it are read; as are elements after a long run of space.
func TestReadArrayElementOverTheLimit(t *testing.T) {
	big := func() io.Reader {
		return readerOf(`{"eventId":"big","t":"`, repeat('x', 2*source.MaxLineBytes), `"}`)
	}
	tests := []struct {
		name  string
		input func() io.Reader
		want  []string
	}{
		{"one line", func() io.Reader { return readerOf("["+ev("a")+",", big(), ","+ev("b")+"]\n"+ev("c")+"\n") },
			[]string{"1:a", "1!array element longer than", "1:b", "2:c"}},
		{"pretty", func() io.Reader {
			return readerOf("[\n  "+ev("a")+",\n  ", big(), ",\n  "+ev("b")+",\n  "+ev("b2")+"\n]\n"+ev("c")+"\n")
		}, []string{"2:a", "3!array element longer than", "4:b", "5:b2", "7:c"}},
		{"last element", func() io.Reader { return readerOf("[\n", big(), "\n]\n"+ev("c")+"\n") },
			[]string{"2!array element longer than", "4:c"}},
		{"space before a small element", func() io.Reader {
			return readerOf("["+ev("a")+",", repeat(' ', 2*source.MaxLineBytes), "\n"+ev("b")+"]\n")
		}, []string{"1:a", "2:b"}},
		{"a long number", func() io.Reader { return readerOf("[", repeat('7', 2*source.MaxLineBytes), ", "+ev("b")+"]") },
			[]string{"1!array element longer than", "1:b"}},
		{"cut by the end", func() io.Reader {
			return readerOf("[\n"+ev("a")+",\n", readerOf(`{"eventId":"big","t":"`, repeat('x', 2*source.MaxLineBytes)))
		}, []string{"2:a", "3!the file ends inside this array element"}},
		{"unclosed after", func() io.Reader { return readerOf("[\n"+ev("a")+",\n", big(), "\n") },
			[]string{"2:a", "3!array element longer than", "1!the JSON array opened at line 1 is not closed"}},
		{"bad inside", func() io.Reader {
			return readerOf("[\n", readerOf(`{"eventId":"big","t":"`, repeat('x', 2*source.MaxLineBytes), `" oops}`), "\n]\n"+ev("c")+"\n")
		}, []string{"2!invalid JSON in an array element", "4:c"}},
		{"bad after", func() io.Reader { return readerOf("[\n", big(), " x\n"+ev("c")+"\n") },
			[]string{"2!array element longer than", "2!where ',' or ']' was due", "3:c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			mem := allocated(func() { got = outcomesFrom(t, tc.input()) })
			if !matches(got, tc.want) {
				t.Errorf("got %.400q, want %q", got, tc.want)
			}
			if mem > 64<<20 { // as for a 256 MB element: see below
				t.Errorf("allocated %d MB reading an element of %d MB", mem>>20, 2*source.MaxLineBytes>>20)
			}
			slow := outcomesFrom(t, iotest.HalfReader(tc.input()))
			if !matches(slow, tc.want) {
				t.Errorf("read in small pieces: got %.400q, want %q", slow, tc.want)
			}
		})
	}
}

// A huge element costs the limit, not its size.
func TestReadHugeArrayElementIsNotHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 256 MB of input")
	}
	in := readerOf("[", readerOf(`{"eventId":"big","t":"`, repeat('x', 256<<20), `"}`), ","+ev("b")+"]")
	var got []string
	mem := allocated(func() { got = outcomesFrom(t, in) })
	if want := []string{"1!array element longer than", "1:b"}; !matches(got, want) {
		t.Errorf("got %.300q, want %q", got, want)
	}
	if mem > 64<<20 {
		t.Errorf("allocated %d MB reading a 256 MB element", mem>>20)
	}
	t.Logf("allocated %d MB", mem>>20)
}
