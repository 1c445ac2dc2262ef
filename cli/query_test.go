package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/backend/osindex/ostest"
	"engram/ingest/gen"
)

// jsonDocs parses the JSON lines of a query command's output.
func jsonDocs(t *testing.T, out string) []map[string]any {
	t.Helper()
	var docs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		docs = append(docs, d)
	}
	return docs
}

// TestQueryCommands runs turns, turn, search and similar over a small
// data set and checks their answers against the data.
func TestQueryCommands(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(demoLines(60), "ingest"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	out, stderr, code := c.run("", "search", "--json", "agent:agent-a", "success:false")
	if code != 0 {
		t.Fatalf("search: %d %s", code, stderr)
	}
	found := jsonDocs(t, out)
	if len(found) == 0 {
		t.Fatal("search agent:agent-a success:false found nothing in the data set")
	}
	for _, d := range found {
		if d["agent_id"] != "agent-a" || d["success"] != false {
			t.Fatalf("search agent:agent-a success:false gave %v/%v", d["agent_id"], d["success"])
		}
	}
	out, _, code = c.run("", "turns", "--json", "--limit", "3")
	turns := jsonDocs(t, out)
	if code != 0 || len(turns) != 3 {
		t.Fatalf("turns --limit 3: code %d, %d rows", code, len(turns))
	}
	key, _ := turns[0]["turn_key"].(string)
	out, stderr, code = c.run("", "turn", "--json", key)
	events := jsonDocs(t, out)
	if code != 0 || len(events) == 0 || fmt.Sprint(turns[0]["events"]) != fmt.Sprint(len(events)) {
		t.Fatalf("turn %s: code %d, %d events (turns says %v), %s", key, code, len(events), turns[0]["events"], stderr)
	}
	out, stderr, code = c.run("", "similar", "--json", "--limit", "4", events[0]["event_id"].(string))
	if near := jsonDocs(t, out); code != 0 || len(near) != 4 {
		t.Fatalf("similar: code %d, %d results, %s", code, len(near), stderr)
	}
	// Filtered: the nearest outcomes in a time range, each one an outcome
	// (the filters applied before the neighbours are chosen, so there are
	// as many as asked for).
	out, stderr, code = c.run("", "similar", "--json", "--limit", "4", "--type", "outcome",
		"--since", "2026-05-01", "--until", "2026-06-01", events[0]["event_id"].(string))
	near := jsonDocs(t, out)
	if code != 0 || len(near) != 4 {
		t.Fatalf("similar --type outcome: code %d, %d results, %s", code, len(near), stderr)
	}
	for _, n := range near {
		d, _ := n["document"].(map[string]any)
		if d["event_type"] != "outcome" {
			t.Fatalf("similar --type outcome gave %v", d["event_type"])
		}
	}
	if _, stderr, code = c.run("", "similar", "--since", "soon", events[0]["event_id"].(string)); code == 0 || !strings.Contains(stderr, "--since") {
		t.Fatalf("similar --since soon: code %d, %s", code, stderr)
	}
	if _, stderr, code = c.run("", "search", "importance>=high"); code != 2 || !strings.Contains(stderr, "^") {
		t.Fatalf("bad expression: code %d, stderr %s", code, stderr)
	}
}

// TestTailExpr follows the index with a filter while batches are ingested:
// only matching events are printed, as they arrive.
func TestTailExpr(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(demoLines(5), "ingest"); code != 0 { // the index exists
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() {
		e := &env{strings.NewReader(""), &out, &errb, func(k string) string { return c.env[k] }}
		done <- run(ctx, e, []string{"tail", "--data", c.data, "--limit", "12", "agent:agent-b"})
	}()
	for batch := 0; ; batch++ {
		select {
		case code := <-done:
			if code != 0 || ctx.Err() != nil {
				t.Fatalf("tail: code %d, %v, stderr %s", code, ctx.Err(), errb.String())
			}
			docs := jsonDocs(t, out.String())
			if len(docs) != 12 {
				t.Fatalf("tail --limit 12 printed %d events", len(docs))
			}
			for _, d := range docs {
				if d["agent_id"] != "agent-b" {
					t.Fatalf("tail agent:agent-b printed an event of %v", d["agent_id"])
				}
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		g := gen.New(gen.Config{Seed: uint64(batch), Prefix: fmt.Sprintf("b%d-", batch)})
		var in strings.Builder
		for range 20 {
			in.Write(g.Next())
			in.WriteByte('\n')
		}
		if _, stderr, code := c.run(in.String(), "ingest"); code != 0 {
			t.Fatalf("ingest batch %d: %d %s", batch, code, stderr)
		}
	}
}

// TestDemoIsIndexedInOrder: the demo's listings are the same every time,
// newest turn first.
func TestDemoIsIndexedInOrder(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run("", "demo", "--turns", "40"); code != 0 {
		t.Fatalf("demo: %d %s", code, stderr)
	}
	out, _, _ := c.run("", "turns", "--json", "--limit", "40")
	turns := jsonDocs(t, out)
	if len(turns) != 40 {
		t.Fatalf("%d turns, want 40", len(turns))
	}
	for i, tr := range turns {
		if want := fmt.Sprintf("turn-%06d", 40-i); tr["turn_key"] != want {
			t.Fatalf("turn %d is %v, want %s (newest first)", i, tr["turn_key"], want)
		}
	}
}

// Read commands never create an OpenSearch index: a mistyped name is said
// not to exist, with the names that do, and stays absent.
func TestReadersNeverCreateOpenSearchIndex(t *testing.T) {
	url := ostest.URL(t)
	name := ostest.Index(t, "engram-typo-")
	c := newCLI(t)
	if err := os.MkdirAll(filepath.Join(c.data, "archive"), 0o755); err != nil { // verify wants one
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"show", "x"}, {"search", "x"}, {"turns"}, {"verify"}} {
		args := append([]string{cmd[0], "--index", "opensearch", "--opensearch-url", url, "--opensearch-index", name}, cmd[1:]...)
		_, stderr, code := c.run("", args...)
		if code == 0 || !strings.Contains(stderr, "index "+name+" does not exist") {
			t.Errorf("%s: code %d, stderr %s", args[0], code, stderr)
		}
	}
	if status, _ := ostest.Admin(t, url, "HEAD", "/"+name, ""); status != 404 {
		t.Fatalf("HEAD /%s = %d: a reader created the index", name, status)
	}
}

// TestSearchRankWindow: a ranked search says what it ranked, and
// --rank-window bounds it to the newest matches.
func TestSearchRankWindow(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(demoLines(60), "ingest"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	out, stderr, code := c.run("", "search", "--json", "--limit", "0", "--rank-window", "all", "the")
	all := jsonDocs(t, out)
	if code != 0 || len(all) < 10 {
		t.Fatalf("search the: code %d, %d results: %s", code, len(all), stderr)
	}
	if !strings.Contains(stderr, "ranked every match by relevance") {
		t.Errorf("--rank-window all: stderr %q", stderr)
	}
	out, stderr, code = c.run("", "search", "--json", "--limit", "0", "--rank-window", "4", "the")
	if got := jsonDocs(t, out); code != 0 || len(got) != 4 {
		t.Fatalf("--rank-window 4: code %d, %d results", code, len(got))
	}
	if !strings.Contains(stderr, "ranked the newest 4 matches by relevance; older documents may match too") {
		t.Errorf("--rank-window 4: stderr %q", stderr)
	}
	_, stderr, _ = c.run("", "search", "--json", "--limit", "0", "--rank-window", "1000", "the")
	if want := fmt.Sprintf("ranked all %d matches by relevance", len(all)); !strings.Contains(stderr, want) {
		t.Errorf("--rank-window 1000: stderr %q, want %q", stderr, want)
	}
	_, stderr, _ = c.run("", "search", "agent:agent-a")
	if strings.Contains(stderr, "ranked") {
		t.Errorf("a search without words is newest first, but says %q", stderr)
	}
	for _, bad := range []string{"0", "-3", "many"} {
		if _, stderr, code := c.run("", "search", "--rank-window", bad, "the"); code == 0 || !strings.Contains(stderr, "search.rank_window") {
			t.Errorf("--rank-window %s: code %d, stderr %q", bad, code, stderr)
		}
	}
}
