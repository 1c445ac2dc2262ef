package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"engram/model"
)

// dataDirSum is a checksum of every file under dir, by name and content.
// SQLite's shared-memory file (index.db-shm) is left out: a reader maps
// it to coordinate with writers, which is no write of data.
func dataDirSum(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, "-shm") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %d %x\n", rel, len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// FuzzDiffSessionArgs drives `engram diff` (events and --turn) and
// `engram session` with arbitrary ids, turn keys and flags over a small
// embedded data set. Each run either succeeds, printing nothing raw (no
// control characters but newlines and tabs), or fails with exit status 1
// or 2 and one line on stderr; and nothing is written to the data
// directory.
func FuzzDiffSessionArgs(f *testing.F) {
	home := f.TempDir()
	data := filepath.Join(f.TempDir(), "data")
	env := func(stdout, stderr *bytes.Buffer) *env {
		return &env{strings.NewReader(""), stdout, stderr, func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), env(&out, &errb), []string{"demo", "--data", data, "--turns", "4"}); code != 0 {
		f.Fatalf("demo: %d %s", code, errb.String())
	}
	// Real ids, sessions and turn keys of the data set, as seeds.
	var ids, sessions, turns []string
	_ = filepath.WalkDir(filepath.Join(data, "archive"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var e model.Event
		if json.Unmarshal(b, &e) == nil && e.EventID != "" {
			ids = append(ids, e.EventID)
			sessions = append(sessions, e.Context.SessionID)
			turns = append(turns, model.TurnKey(e.Context.TurnID, e.Context.TraceID, e.EventID))
		}
		return nil
	})
	if len(ids) < 2 {
		f.Fatalf("the demo archive holds %d events", len(ids))
	}
	// A first read lets SQLite make its reader files; from then on the
	// directory must not change.
	run(context.Background(), env(&out, &errb), []string{"diff", "--data", data, ids[0], ids[1]})
	before := dataDirSum(f, data)

	f.Add(false, uint8(0), "", ids[0], ids[1])
	f.Add(false, uint8(1|2), "", ids[0], ids[len(ids)-1])
	f.Add(false, uint8(4), "", turns[0], turns[len(turns)-1])
	f.Add(false, uint8(4|1), "", ids[0], "missing-turn")
	f.Add(true, uint8(0), "", sessions[0], "")
	f.Add(true, uint8(1|8), "2", sessions[0], "")
	f.Add(true, uint8(8), "-1", "session-\x1b[2J", "")
	f.Add(false, uint8(16), "", "--data=/tmp/elsewhere", "-")
	f.Add(true, uint8(32), "1e9", "", "")
	f.Add(false, uint8(64), "", "a\nb", "\xff\xfe")
	f.Add(true, uint8(0), "", `x" OR session:"`+sessions[0], "")
	f.Fuzz(func(t *testing.T, session bool, flags uint8, limit, a, b string) {
		args := []string{"diff", "--data", data}
		if session {
			args[0] = "session"
		}
		for i, fl := range []string{"--json", "--all", "--turn", "--limit=" + limit, "--bogus", "--limit", "--json=maybe"} {
			if flags&(1<<i) == 0 {
				continue
			}
			args = append(args, fl)
			if fl == "--limit" {
				args = append(args, limit)
			}
		}
		pos := []string{a, b}
		if session {
			pos = []string{a}
			if flags&128 != 0 {
				pos = append(pos, b) // one too many
			}
		}
		// An argument that looks like a flag is taken as one unless after
		// "--": a fuzzed "--data=..." must not send the run elsewhere.
		for _, p := range pos {
			if strings.HasPrefix(p, "-") {
				args = append(args, "--")
				break
			}
		}
		args = append(args, pos...)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), env(&stdout, &stderr), args)
		switch code {
		case 0:
			for _, c := range stdout.Bytes() {
				if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
					t.Fatalf("%q: a raw control character 0x%02x in the output:\n%q", args, c, stdout.String())
				}
			}
		case 1, 2:
			msg := strings.TrimSuffix(stderr.String(), "\n")
			if msg == "" || strings.ContainsAny(msg, "\n\r\x1b") || stdout.Len() > 0 {
				t.Fatalf("%q: exit %d with stderr %q, stdout %q: want one line and no output", args, code, stderr.String(), stdout.String())
			}
			if !strings.HasPrefix(msg, "engram: ") && !strings.HasPrefix(msg, "usage: engram ") {
				t.Fatalf("%q: error %q does not say it is engram's", args, msg)
			}
		default:
			t.Fatalf("%q: exit %d, want 0, 1 or 2\n%s", args, code, stderr.String())
		}
		if after := dataDirSum(t, data); after != before {
			t.Fatalf("%q: the data directory changed", args)
		}
	})
}
