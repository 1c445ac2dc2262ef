package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"engram/ingest/archivetest"
	"engram/ingest/gen"
)

// cli runs engram in-process with its own streams and environment.
type cli struct {
	t    *testing.T
	data string
	env  map[string]string
}

func newCLI(t *testing.T) *cli {
	return &cli{t: t, data: t.TempDir(), env: map[string]string{"HOME": t.TempDir()}}
}

func (c *cli) run(stdin string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	e := &env{strings.NewReader(stdin), &out, &errb, func(k string) string { return c.env[k] }}
	code = run(context.Background(), e, append(args[:1:1], append([]string{"--data", c.data}, args[1:]...)...))
	return out.String(), errb.String(), code
}

func demoLines(n int) string {
	g := gen.New(gen.Config{Seed: 3})
	var b strings.Builder
	for range n {
		b.Write(g.Next())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestIngestShowVerifyReindex(t *testing.T) {
	c := newCLI(t)
	input := demoLines(30)
	_, stderr, code := c.run(input, "ingest")
	if code != 0 || !strings.Contains(stderr, "ingested 30, duplicates 0, rejected 0, failed 0") {
		t.Fatalf("ingest: code %d, stderr %s", code, stderr)
	}
	_, stderr, code = c.run(input, "ingest", "-")
	if code != 0 || !strings.Contains(stderr, "ingested 0, duplicates 30") {
		t.Fatalf("re-ingest: code %d, stderr %s", code, stderr)
	}
	var first struct{ EventID string }
	if err := json.Unmarshal([]byte(strings.SplitN(input, "\n", 2)[0]), &first); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := c.run("", "show", first.EventID)
	var shown struct {
		Index   map[string]any `json:"index"`
		Archive map[string]any `json:"archive"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Index["event_id"] != first.EventID || shown.Archive["eventId"] != first.EventID {
		t.Fatalf("show: code %d, out %.200s, stderr %s", code, out, stderr)
	}
	if _, stderr, code = c.run("", "show", "no-such-event"); code != 1 || !strings.Contains(stderr, `no event "no-such-event"`) {
		t.Fatalf("show unknown: code %d, stderr %s", code, stderr)
	}
	if out, _, code = c.run("", "verify"); code != 0 || !strings.Contains(out, "agree") {
		t.Fatalf("verify: code %d, out %s", code, out)
	}
	os.Remove(filepath.Join(c.data, "index.db"))
	os.Remove(filepath.Join(c.data, "index.db-wal"))
	os.Remove(filepath.Join(c.data, "index.db-shm"))
	if _, stderr, code = c.run("", "reindex"); code != 0 || !strings.Contains(stderr, "30 objects, 30 created") {
		t.Fatalf("reindex: code %d, stderr %s", code, stderr)
	}
	if out, _, code = c.run("", "verify"); code != 0 {
		t.Fatalf("verify after reindex: code %d, out %s", code, out)
	}
}

func TestVerifyFindsDisagreement(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(6), "ingest")
	var keys []string
	_ = filepath.Walk(filepath.Join(c.data, "archive"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			keys = append(keys, p)
		}
		return nil
	})
	os.Remove(keys[0])
	if err := os.WriteFile(keys[1], []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := c.run("", "verify", "--json")
	var rep struct {
		Differences map[string]int `json:"differences"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Differences["missing-archive"] != 1 || rep.Differences["bad-object"] != 1 {
		t.Fatalf("verify: code %d, out %s", code, out)
	}
}

func TestRejectsAreReportedAndKept(t *testing.T) {
	c := newCLI(t)
	good := demoLines(2)
	input := strings.Split(good, "\n")[0] + "\n" + `{"eventId":"../x","timestamp":"2026-05-08T10:00:00","type":"user_input","context":{},"input":{"text":"hi"}}` + "\n" + strings.Split(good, "\n")[1] + "\n"
	_, stderr, code := c.run(input, "ingest")
	for _, want := range []string{
		`stdin:2: eventId: "../x" must not contain /`,
		`stdin:2: timestamp: "2026-05-08T10:00:00" is not an RFC 3339 timestamp with a zone`,
		"stdin:2: context.sessionId: required",
		"ingested 2, duplicates 0, rejected 1",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	files, _ := filepath.Glob(filepath.Join(c.data, "rejects", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("rejects files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), `"source":"stdin:2"`) || !strings.Contains(string(b), `\"eventId\":\"../x\"`) {
		t.Fatalf("rejects file: %s", b)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	c := newCLI(t)
	_, stderr, code := c.run(demoLines(3), "ingest", "--dry-run")
	if code != 0 || !strings.Contains(stderr, "dry run: 3 valid") {
		t.Fatalf("code %d stderr %s", code, stderr)
	}
	if entries, _ := os.ReadDir(c.data); len(entries) != 0 {
		t.Fatalf("dry run wrote %d entries into the data directory", len(entries))
	}
}

func TestHelpDescribesEveryCommand(t *testing.T) {
	var out bytes.Buffer
	e := &env{strings.NewReader(""), &out, &out, func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"--help"}); code != 0 {
		t.Fatalf("help exit %d", code)
	}
	top := out.String()
	for _, cmd := range commands() {
		if !strings.Contains(top, "  "+cmd.name+" ") {
			t.Errorf("help lacks %s", cmd.name)
		}
		if cmd.flags == nil {
			continue
		}
		out.Reset()
		if code := run(context.Background(), e, []string{"help", cmd.name}); code != 0 || !strings.Contains(out.String(), "-data") {
			t.Errorf("help %s: exit %d, output lacks the flags:\n%s", cmd.name, code, out.String())
		}
		if !strings.Contains(out.String(), "or s3 (default dir)") {
			t.Errorf("help %s does not show the settings' defaults:\n%s", cmd.name, out.String())
		}
	}
}

// An event the pending journal holds is archived and waits for the next
// run to index it: verify skips it as in flight and says so.
func TestVerifySkipsPendingJournalEvents(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(3), "ingest")
	key, body := archivetest.Event("pending-1", "2026-05-08T22:31:25Z", "hi", []float64{0.5}, 0.25)
	file := filepath.Join(c.data, "archive", filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if out, _, code := c.run("", "verify"); code != 1 || !strings.Contains(out, "missing-index") {
		t.Fatalf("verify without a journal entry: code %d, out %s", code, out)
	}
	line := `{"eventId":"pending-1","objectStorageKey":"` + key + `","reason":"test"}` + "\n"
	if err := os.WriteFile(filepath.Join(c.data, journalFile), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := c.run("", "verify")
	if code != 0 || !strings.Contains(out, "1 events skipped as in flight") {
		t.Fatalf("verify with a journal entry: code %d, out %s", code, out)
	}
}

// An eventId of few characters but too many bytes for a file name is
// rejected at validation, with one message in a dry run and a real one.
func TestLongByteEventIDRejectedAlike(t *testing.T) {
	c := newCLI(t)
	line := `{"eventId":"` + strings.Repeat("é", 126) + `","timestamp":"2026-05-08T10:00:00Z","type":"user_input","context":{"sessionId":"s"},"input":{"text":"hi"}}` + "\n"
	const want = "stdin:1: eventId: 252 bytes in UTF-8, at most 250 allowed"
	_, dry, _ := c.run(line, "ingest", "--dry-run")
	_, real, _ := c.run(line, "ingest")
	if !strings.Contains(dry, want) || !strings.Contains(dry, "1 rejected, 0 failed") {
		t.Errorf("dry run: want %q, 1 rejected; stderr %s", want, dry)
	}
	if !strings.Contains(real, want) || !strings.Contains(real, "rejected 1, failed 0") {
		t.Errorf("real run: want %q, rejected 1; stderr %s", want, real)
	}
}

// Another process holding the index's write lock for longer than the busy
// timeout (5 s) is an outage: the run waits it out and ingests everything,
// rather than dying at open or failing the batch.
func TestIngestWaitsOutABusyIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for 6 s")
	}
	c := newCLI(t)
	lines := strings.SplitAfter(demoLines(4), "\n")
	c.run(lines[0], "ingest")
	other, err := sql.Open("sqlite", "file:"+filepath.Join(c.data, "index.db")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin() // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(6*time.Second, func() { tx.Rollback() })
	_, stderr, code := c.run(strings.Join(lines[1:], ""), "ingest")
	if code != 0 || !strings.Contains(stderr, "ingested 3, duplicates 0, rejected 0, failed 0") || !strings.Contains(stderr, "outage: index") {
		t.Fatalf("code %d, stderr %s", code, stderr)
	}
}

// A named pipe is read as a stream: the check before the run must not open
// it (closing it would kill its writer with SIGPIPE and lose its data).
func TestIngestFromNamedPipe(t *testing.T) {
	c := newCLI(t)
	fifo := filepath.Join(t.TempDir(), "events.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	wrote := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(demoLines(3))
			f.Close()
		}
		wrote <- err
	}()
	done := make(chan string, 1)
	go func() { _, stderr, _ := c.run("", "ingest", fifo); done <- stderr }()
	select {
	case stderr := <-done:
		if err := <-wrote; err != nil || !strings.Contains(stderr, "ingested 3, duplicates 0, rejected 0, failed 0") {
			t.Fatalf("writer: %v; stderr %s", err, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("ingest from a named pipe hangs (writer: %v)", <-wrote)
	}
}

// On a data directory that cannot be written (read-only media) the
// inspector opens read-only rather than failing to open its writers.
func TestInspectorOnReadOnlyDataDirectory(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(3), "ingest")
	defer func(w func(string) bool) { writable = w }(writable)
	writable = func(string) bool { return false }
	e := &env{strings.NewReader(""), new(bytes.Buffer), new(bytes.Buffer), func(k string) string { return c.env[k] }}
	fs, o := uiFlags(e)
	if err := fs.Parse([]string{"--data", c.data}); err != nil {
		t.Fatal(err)
	}
	d, closeAll := openUIDeps(context.Background(), o, fs, e)
	defer closeAll()
	if d.Err != nil || d.Reader == nil || d.Archive == nil || d.Recorder != nil || !o.readonly {
		t.Fatalf("want a read-only inspector: err %v, reader %v, archive %v, recorder %v, readonly %v", d.Err, d.Reader != nil, d.Archive != nil, d.Recorder != nil, o.readonly)
	}
}

// A symlinked day directory is refused with one message by ingest, show,
// verify and reindex alike (it was followed by some and passed over by
// others, so they disagreed).
func TestSymlinkedDayDirectoryRefusedEverywhere(t *testing.T) {
	c := newCLI(t)
	key, body := archivetest.Event("e-1", "2026-05-08T22:31:25Z", "hi", []float64{0.5}, 0.25)
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "e-1.json"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(c.data, "archive", filepath.FromSlash(path.Dir(key)))
	if err := os.MkdirAll(filepath.Dir(day), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, day); err != nil {
		t.Fatal(err)
	}
	c.run("", "reindex") // creates the index
	line := `{"eventId":"e-2","timestamp":"2026-05-08T10:00:00Z","type":"user_input","context":{"sessionId":"s"},"input":{"text":"hi"}}` + "\n"
	const want = "events/2026/05/08 is a symbolic link"
	for _, args := range [][]string{{"ingest"}, {"verify"}, {"reindex"}} {
		out, stderr, code := c.run(line, args...)
		if code == 0 || !strings.Contains(out+stderr, want) {
			t.Errorf("%s: code %d, want %q; out %s stderr %s", args[0], code, want, out, stderr)
		}
	}
}

// Two runs starting in the same millisecond write rejects files of their
// own.
func TestRejectsFileNamedPerRun(t *testing.T) {
	now := time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)
	a, b := rejectsPath("/data", now), rejectsPath("/data", now)
	if a == b || !strings.HasPrefix(a, filepath.Join("/data", "rejects", "20260508T100000.000Z")) {
		t.Fatalf("rejects files %s and %s", a, b)
	}
}

// An interrupted run says how much of its input it did not read.
func TestInterruptedIngestSaysWhatIsUnread(t *testing.T) {
	c := newCLI(t)
	input := filepath.Join(t.TempDir(), "events.jsonl")
	lines := demoLines(2000) // more than the reader's buffer
	if err := os.WriteFile(input, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted before anything is ingested
	var out, errb bytes.Buffer
	e := &env{strings.NewReader(lines), &out, &errb, func(k string) string { return c.env[k] }}
	run(ctx, e, []string{"ingest", "--data", c.data, input, "-"})
	re := regexp.MustCompile(`interrupted: read (\d+) of the (\d+) bytes of ` + regexp.QuoteMeta(input) + `, (\d+) left unread; stdin not read to its end`)
	m := re.FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no account of the unread input in:\n%s", errb.String())
	}
	read, _ := strconv.Atoi(m[1])
	size, _ := strconv.Atoi(m[2])
	left, _ := strconv.Atoi(m[3])
	if size != len(lines) || read+left != size || left == 0 {
		t.Fatalf("read %d + left %d != size %d (file %d bytes)", read, left, size, len(lines))
	}
}

// What one reject keeps of its input is capped, saying so: a few long bad
// lines must not make a rejects file of their size.
func TestRejectStoresAtMostItsCap(t *testing.T) {
	c := newCLI(t)
	long := `{"eventId":"x","text":"` + strings.Repeat("a", 1<<20) + `",}` + "\n"
	c.run(long+long, "ingest")
	files, _ := filepath.Glob(filepath.Join(c.data, "rejects", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("rejects files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if len(b) > 3*maxRejectInput || !strings.Contains(string(b), "input cut to its first 65536 of 1048602 bytes") {
		t.Fatalf("rejects file of %d bytes: %.300s", len(b), b)
	}
}

// Input that is not text (like /dev/urandom) stops the run with a clear
// message instead of writing a rejects file of its size.
func TestIngestRefusesBinaryInput(t *testing.T) {
	c := newCLI(t)
	input := filepath.Join(t.TempDir(), "random.bin")
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i*7919 + i/251)
	}
	if err := os.WriteFile(input, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := c.run("", "ingest", input)
	files, _ := filepath.Glob(filepath.Join(c.data, "rejects", "*.jsonl"))
	if code != 1 || !strings.Contains(stderr, input+": not text") || len(files) != 0 {
		t.Fatalf("code %d, rejects %v, stderr %s", code, files, stderr)
	}
}
