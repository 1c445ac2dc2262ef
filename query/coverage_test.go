package query

import (
	"context"
	"strings"
	"testing"
)

type coverageReader struct {
	Reader
	c     Coverage
	calls int
}

func (r *coverageReader) Coverage(context.Context) (Coverage, error) {
	r.calls++
	return r.c, nil
}

func TestCoverageWarnings(t *testing.T) {
	r := &coverageReader{c: Coverage{Total: 3320, Plain: 3320,
		Lacking: map[string]int64{"tool": 3320, "success": 3320, "latency_ms": 3320, "trace_id": 3000}}}
	ctx := context.Background()
	ws, err := CoverageWarnings(ctx, r, `memory tool:kubectl -success:false latency>1000 tool:other session:s type:tool_result`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tool: 3,320 of 3,320 documents have no tool field — written without engram's extensions; see engram reindex --into",
		"success: 3,320 of 3,320 documents have no success field",
		"latency: 3,320 of 3,320 documents have no latency_ms field",
	}
	if len(ws) != len(want) {
		t.Fatalf("warnings %q, want %d", ws, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(ws[i], w) {
			t.Errorf("warning %d = %q, want prefix %q", i, ws[i], w)
		}
	}
	// Terms on source fields, free words and a bad expression ask nothing.
	r.calls = 0
	for _, src := range []string{"", "memory", "session:s type:x agent:a", `tool:"unterminated`} {
		if ws, err := CoverageWarnings(ctx, r, src); err != nil || ws != nil {
			t.Errorf("CoverageWarnings(%q) = %q, %v", src, ws, err)
		}
	}
	if r.calls != 0 {
		t.Errorf("Coverage asked %d times for filters without extension fields", r.calls)
	}
	// An engram-written index: nothing to say, no mark.
	r.c = Coverage{Total: 10, Lacking: map[string]int64{}}
	if ws, _ := CoverageWarnings(ctx, r, "tool:x success:true"); ws != nil || r.c.Mark() != "" {
		t.Errorf("engram index: warnings %q, mark %q", ws, r.c.Mark())
	}
	// A field the mapping lacks is missing from every document.
	r.c = Coverage{Total: 7, Unmapped: []string{"turn_id"}}
	if ws, _ := CoverageWarnings(ctx, r, "turn:t1"); len(ws) != 1 || !strings.HasPrefix(ws[0], "turn: 7 of 7 documents have no turn_id field") {
		t.Errorf("unmapped: %q", ws)
	}
	// A reader that cannot tell says nothing.
	if ws, err := CoverageWarnings(ctx, struct{ Reader }{}, "tool:x"); ws != nil || err != nil {
		t.Errorf("no FieldCoverage: %q, %v", ws, err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 3320: "3,320", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
