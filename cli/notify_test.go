package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verifyDiffs runs verify --json and returns its exit code and counts.
func (c *cli) verifyDiffs(args ...string) (int, map[string]int) {
	c.t.Helper()
	out, stderr, code := c.run("", append([]string{"verify", "--json"}, args...)...)
	var rep struct {
		Differences map[string]int `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		c.t.Fatalf("verify --json: %v\n%s\n%s", err, out, stderr)
	}
	return code, rep.Differences
}

func (c *cli) topicFile(name string) string { return filepath.Join(c.data, "topics", name+".jsonl") }

// Verify checks the third layer: each indexed event announced on both
// topics, nothing announced that is not indexed, every line readable.
func TestVerifyChecksNotifications(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(10), "ingest")
	if code, d := c.verifyDiffs(); code != 0 || len(d) != 0 {
		t.Fatalf("after ingest: code %d, %v", code, d)
	}
	indexed := c.topicFile("memory.indexed")
	b, _ := os.ReadFile(indexed)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	stranger := strings.Replace(lines[1], `"eventId":"`, `"eventId":"stranger-`, 1)
	// One announcement lost, one of an unknown event, a bad line, and a
	// write cut short at the end.
	body := strings.Join(lines[1:], "") + "\n" + stranger + "not json\n" + lines[0][:20]
	if err := os.WriteFile(indexed, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, d := c.verifyDiffs()
	want := map[string]int{"unannounced": 1, "announced-not-indexed": 1, "bad-notification": 1, "cut-notification-line": 1}
	for k, n := range want {
		if d[k] != n {
			t.Errorf("%s: %d, want %d (all: %v)", k, d[k], n, d)
		}
	}
	if code != 1 {
		t.Errorf("verify exit %d, want 1", code)
	}
	if code, d := c.verifyDiffs("--no-topics"); code != 0 || len(d) != 0 {
		t.Errorf("--no-topics: code %d, %v", code, d)
	}
}

// A rebuilt index is announced when asked, and then verify agrees even
// when the topics had been lost.
func TestReindexAnnounces(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(12), "ingest")
	os.RemoveAll(filepath.Join(c.data, "topics"))
	for _, f := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		os.Remove(filepath.Join(c.data, f))
	}
	_, stderr, code := c.run("", "reindex", "--announce")
	if code != 0 || !strings.Contains(stderr, "12 documents announced, 0 held") {
		t.Fatalf("reindex --announce: code %d, %s", code, stderr)
	}
	if code, d := c.verifyDiffs(); code != 0 || len(d) != 0 {
		t.Fatalf("after reindex --announce: code %d, %v", code, d)
	}
	// Without --announce the rebuild says nothing on the topics.
	for _, f := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		os.Remove(filepath.Join(c.data, f))
	}
	c.run("", "reindex")
	if n := countFileLines(t, c.topicFile("memory.indexed")); n != 12 {
		t.Errorf("memory.indexed has %d lines after a plain reindex, want the 12 from before", n)
	}
}

func countFileLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// The recovery with only the archive left verifies clean: into empty topic
// files a rebuild announces by default; told not to, it says how to, and
// verify names the notification gap apart from the archive and the index.
func TestRecoveryVerifiesClean(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(12), "ingest")
	lose := func() {
		os.RemoveAll(filepath.Join(c.data, "topics"))
		for _, f := range []string{"index.db", "index.db-wal", "index.db-shm"} {
			os.Remove(filepath.Join(c.data, f))
		}
	}
	lose()
	_, stderr, code := c.run("", "reindex")
	if code != 0 || !strings.Contains(stderr, "announcing every document") || !strings.Contains(stderr, "12 documents announced, 0 held") {
		t.Fatalf("reindex into empty topics: code %d, %s", code, stderr)
	}
	if out, _, code := c.run("", "verify"); code != 0 || !strings.Contains(out, "archive and index: 12 agree") || !strings.Contains(out, "12 of 12 indexed events announced") {
		t.Fatalf("verify after the recovery: code %d\n%s", code, out)
	}
	lose()
	_, stderr, code = c.run("", "reindex", "--announce=false")
	if code != 0 || !strings.Contains(stderr, "the 12 documents were not announced") || !strings.Contains(stderr, "engram reindex --announce") {
		t.Fatalf("reindex --announce=false: code %d, %s", code, stderr)
	}
	out, _, code := c.run("", "verify")
	for _, want := range []string{"archive and index: 12 agree", "0 of 12 indexed events announced, 12 unannounced", "the archive and the index agree; the notifications do not", "engram reindex --announce"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Fatalf("verify with the topics lost: code %d, want %q in\n%s", code, want, out)
		}
	}
	if _, stderr, code = c.run("", "reindex", "--announce"); code != 0 || !strings.Contains(stderr, "12 documents announced") {
		t.Fatalf("reindex --announce over the rebuilt index: code %d, %s", code, stderr)
	}
	if out, _, code := c.run("", "verify"); code != 0 {
		t.Fatalf("verify after --announce: code %d\n%s", code, out)
	}
}
