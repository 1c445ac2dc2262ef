package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeInput writes lines to a file in a fresh directory.
func writeInput(t *testing.T, lines string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(name, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestFlagsAfterArguments: a flag after a file name is a flag (it used to
// be taken as a file, and the ingest ran for real on the default store).
func TestFlagsAfterArguments(t *testing.T) {
	c := newCLI(t)
	in := writeInput(t, demoLines(60))
	other := filepath.Join(t.TempDir(), "other")
	_, stderr, code := c.run("", "ingest", in, "--dry-run", "--data", other)
	if code != 0 || !strings.Contains(stderr, "dry run: 60 valid") {
		t.Fatalf("ingest FILE --dry-run: code %d, %s", code, stderr)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Fatalf("a dry run created %s (%v)", other, err)
	}
	if _, err := os.Stat(filepath.Join(c.data, "index.db")); !os.IsNotExist(err) {
		t.Fatalf("a dry run wrote the store (%v)", err)
	}
	if _, stderr, code = c.run("", "ingest", in); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	all, _, _ := c.run("", "search", "--json", "--limit", "100", "tenant:acme")
	demo := 0
	for _, d := range jsonDocs(t, all) {
		if strings.Contains(string(mustJSON(t, d["tags"])), `"demo"`) {
			demo++
		}
	}
	neg, stderr, code := c.run("", "search", "-tag:demo", "--json", "tenant:acme")
	if code != 0 || demo == 0 || len(jsonDocs(t, neg)) != len(jsonDocs(t, all))-demo {
		t.Fatalf("-tag:demo before a flag: code %d, %d of %d results (%d demo), %s", code, len(jsonDocs(t, neg)), len(jsonDocs(t, all)), demo, stderr)
	}
	for _, cmd := range []string{"demo", "config", "verify"} {
		if _, stderr, code := c.run("", cmd, "stray"); code != 2 || !strings.Contains(stderr, `unexpected argument "stray"`) {
			t.Errorf("%s stray: code %d, %s", cmd, code, stderr)
		}
	}
}

// TestShowIsTenantScoped: show reads like every other read command.
func TestShowIsTenantScoped(t *testing.T) {
	c := newCLI(t)
	in := writeInput(t, demoLines(4))
	if _, stderr, code := c.run("", "ingest", in); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	out, _, _ := c.run("", "search", "--json", "--limit", "1", "tenant:acme")
	docs := jsonDocs(t, out)
	if len(docs) != 1 {
		t.Fatalf("setup: no acme event in %s", out)
	}
	id := docs[0]["event_id"].(string)
	if _, stderr, code := c.run("", "show", "--tenant", "globex", id); code != 1 || !strings.Contains(stderr, "no event") {
		t.Fatalf("show of an acme event as globex: code %d, %s", code, stderr)
	}
	if out, stderr, code := c.run("", "show", id, "--tenant", "acme"); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("show as acme: code %d, %s", code, stderr)
	}
}

// TestSettingsValuesChecked: a switch or a choice with a value it cannot
// take is refused, wherever it comes from.
func TestSettingsValuesChecked(t *testing.T) {
	c := newCLI(t)
	out, stderr, code := c.run("", "config", "--opensearch-refresh=wait_for")
	if code != 0 || !strings.Contains(out, "wait_for") {
		t.Fatalf("--opensearch-refresh=wait_for: code %d, %s", code, stderr)
	}
	if _, stderr, code = c.run("", "config", "--s3-tls=enabled"); code != 2 || !strings.Contains(stderr, "want true or false") {
		t.Fatalf("--s3-tls=enabled: code %d, %s", code, stderr)
	}
	c.env["S3_FORCE_PATH_STYLE"] = "maybe"
	if _, stderr, code = c.run("", "config"); code != 1 || !strings.Contains(stderr, `s3.path_style = "maybe" (env S3_FORCE_PATH_STYLE): want true or false`) {
		t.Fatalf("S3_FORCE_PATH_STYLE=maybe: code %d, %s", code, stderr)
	}
	delete(c.env, "S3_FORCE_PATH_STYLE")
	c.env["ENGRAM_INDEX"] = "elastic"
	if _, stderr, code = c.run("", "config"); code != 1 || !strings.Contains(stderr, "want sqlite, opensearch") {
		t.Fatalf("ENGRAM_INDEX=elastic: code %d, %s", code, stderr)
	}
}

// TestMissingStoresAndFiles: a mistyped --data or file name creates
// nothing and ingests nothing.
func TestMissingStoresAndFiles(t *testing.T) {
	c := newCLI(t)
	c.data = filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{{"verify"}, {"show", "some-id"}, {"reindex"}} {
		if _, stderr, code := c.run("", args...); code != 1 || !strings.Contains(stderr, "no ") {
			t.Errorf("%v on a missing store: code %d, %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(c.data); !os.IsNotExist(err) {
		t.Fatalf("reading commands created %s", c.data)
	}
	good := writeInput(t, demoLines(3))
	_, stderr, code := c.run("", "ingest", good, filepath.Join(t.TempDir(), "nonexist.jsonl"))
	if code != 1 || !strings.Contains(stderr, "nothing ingested") || !strings.Contains(stderr, "nonexist.jsonl") {
		t.Fatalf("ingest with a missing file: code %d, %s", code, stderr)
	}
	if _, err := os.Stat(c.data); !os.IsNotExist(err) {
		t.Fatal("an ingest that read nothing created the store")
	}
}

// TestUINeedsTerminal: without a terminal the inspector says so.
func TestUINeedsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), &env{null, &out, &errb, func(string) string { return "" }}, []string{"--data", t.TempDir()})
	if code != 1 || !strings.Contains(errb.String(), "needs a terminal") {
		t.Fatalf("engram </dev/null: code %d, %s", code, errb.String())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShowWithoutArchive prints the index document and says what is wrong.
func TestShowWithoutArchive(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run("", "ingest", "../model/testdata/demo-event.json"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(c.data, "archive", "events", "2026", "05", "08", "demo-event-001.json")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := c.run("", "show", "demo-event-001")
	var shown struct {
		Index   map[string]any  `json:"index"`
		Archive json.RawMessage `json:"archive"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &shown) != nil || shown.Index["event_id"] != "demo-event-001" || string(shown.Archive) != "null" {
		t.Fatalf("show without its archive object: code %d, out %s", code, out)
	}
	if !strings.Contains(stderr, "cannot be read") {
		t.Fatalf("stderr %s", stderr)
	}
}

// TestUsageErrors: what the user typed wrong exits 2 and says what.
func TestUsageErrors(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--since", "2026-13-01"}, "--since"},
		{[]string{"reindex", "--since", "2026-05-09", "--until", "2026-05-01"}, "--until 2026-05-01 is before --since 2026-05-09"},
		{[]string{"demo", "--turns", "-5"}, "--turns -5: want at least 1"},
	} {
		if _, stderr, code := c.run("", tc.args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: code %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), &env{strings.NewReader(""), &out, &errb, c.getenv()}, []string{"help", "bogus"}); code != 2 || !strings.Contains(errb.String(), `no command "bogus"`) {
		t.Errorf("help bogus: code %d, %s", code, errb.String())
	}
}

func (c *cli) getenv() func(string) string { return func(k string) string { return c.env[k] } }
