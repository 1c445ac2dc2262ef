package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"engram/model"
	"engram/query"
)

// pagedReader serves n search results, made as they are asked for, a page
// of at most 1000 at a time; before serving a page it notes how much output
// the pages served before it had produced, and the heap in use.
type pagedReader struct {
	query.Reader
	n       int
	out     *countingWriter
	written []int64 // output written when each page was asked for
	peak    uint64  // the most heap in use when a page was asked for
}

func (r *pagedReader) Search(_ context.Context, _ string, after query.Cursor, limit int) (query.Page, error) {
	r.written = append(r.written, r.out.n)
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	r.peak = max(r.peak, m.HeapAlloc)
	from, _ := strconv.Atoi(string(after))
	to := min(from+min(limit, 1000), r.n)
	var p query.Page
	for i := from; i < to; i++ {
		p.Docs = append(p.Docs, &model.IndexDoc{
			EventID: fmt.Sprintf("e-%07d", i), Timestamp: "2026-05-08T22:31:25Z", EventType: "user_input",
			SessionID: "s", Summary: strings.Repeat("x", 200),
		})
	}
	if to < r.n {
		p.Next = query.Cursor(strconv.Itoa(to))
	}
	return p, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

// searchHeap runs an unbounded search (--limit 0) over n results and
// returns the most heap in use while it ran, and the reader (to see the
// order of reads and writes).
func searchHeap(t *testing.T, n int, asJSON bool) (uint64, *pagedReader) {
	out := &countingWriter{w: io.Discard}
	r := &pagedReader{n: n, out: out}
	e := &env{strings.NewReader(""), out, new(bytes.Buffer), func(string) string { return "" }}
	fetch := func(after query.Cursor, n int) (query.Page, error) {
		return r.Search(context.Background(), "x", after, n)
	}
	if err := searchAll(e, &queryOpts{json: asJSON}, fetch, "x"); err != nil {
		t.Fatal(err)
	}
	return r.peak, r
}

// search --limit 0 and --json stream: each page is written before the next
// is read, and the heap does not grow with the number of results.
func TestSearchUnboundedStreams(t *testing.T) {
	for _, asJSON := range []bool{true, false} {
		small, _ := searchHeap(t, 5_000, asJSON)
		large, r := searchHeap(t, 100_000, asJSON)
		for i := 1; i < len(r.written); i++ {
			if r.written[i] <= r.written[i-1] {
				t.Errorf("json %v: page %d was read before page %d was written", asJSON, i+1, i)
				break
			}
		}
		// Held, 100,000 documents of 200-byte summaries are over 30 MB.
		if large > small+8<<20 {
			t.Errorf("json %v: heap %d MB for 100,000 results, %d MB for 5,000: the results are held", asJSON, large>>20, small>>20)
		}
	}
}
