package cli

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"engram/backend/sqliteindex"
	"engram/query/recall/recalltest"
)

// recallCLI is a CLI over a data directory holding the recall fixture.
func recallCLI(t *testing.T) *cli {
	c := newCLI(t)
	db, err := sqliteindex.Open(filepath.Join(c.data, "index.db"), sqliteindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range db.Write(context.Background(), recalltest.Docs()) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	db.Close()
	return c
}

// TestRecallCommand: the order of --weights text=1 and of --formula
// salience, --explain naming the factor, --json's factors, and that
// recall leaves retrieval_count alone.
func TestRecallCommand(t *testing.T) {
	c := recallCLI(t)
	out, stderr, code := c.run("", "recall", "--json", "--weights", "text=1", "--limit", "3", recalltest.Prompt, "tag:fixture")
	if code != 0 {
		t.Fatalf("recall: %d %s", code, stderr)
	}
	rows := jsonDocs(t, out)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r["document"].(map[string]any)["event_id"].(string))
		f := r["factors"].(map[string]any)
		if len(f) != 6 || f["text"].(map[string]any)["contribution"] == nil {
			t.Fatalf("factors %v", f)
		}
	}
	if !slices.Equal(ids, []string{"recall-a", "recall-b", "recall-c"}) {
		t.Fatalf("text=1: %v", ids)
	}
	if !strings.Contains(stderr, "recall only reads") || !strings.Contains(stderr, "text: all 3 documents holding a word") {
		t.Fatalf("stderr: %s", stderr)
	}
	out, _, code = c.run("", "recall", "--weights", "text=1,recency=0.1", "--limit", "1", "--explain", "recall-d", recalltest.Prompt, "tag:fixture")
	if code != 0 || !strings.Contains(out, "why not recall-d? rank 4, outside the top 1") || !strings.Contains(out, "text kept it out") ||
		!strings.Contains(out, "← kept it out") || !strings.Contains(out, "███") {
		t.Fatalf("explain: %d\n%s", code, out)
	}
	_, stderr, code = c.run("", "recall", "--formula", "salience", "--half-life", "1h", recalltest.Prompt)
	if code != 0 || !strings.Contains(stderr, "formula salience (recency × importance), half-life 1h") {
		t.Fatalf("salience: %d %s", code, stderr)
	}
	out, _, _ = c.run("", "show", "recall-a")
	if !strings.Contains(out, `"retrieval_count": 0`) && !strings.Contains(out, `"retrieval_count":0`) {
		t.Fatalf("retrieval_count changed: %s", out)
	}
	_, stderr, code = c.run("", "recall", "--recall-window", "2", recalltest.Prompt)
	if code != 0 || !strings.Contains(stderr, "text: the newest 2 documents holding a word of the prompt (older ones were not considered)") {
		t.Fatalf("a full window: %d %s", code, stderr)
	}
	if _, stderr, code := c.run("", "recall"); code != 2 || !strings.Contains(stderr, "usage: engram recall") {
		t.Fatalf("no text: %d %s", code, stderr)
	}
}
