package systest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"engram/ingest/gen"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// benchBinary is the engram binary a benchmark measures: ENGRAM_BENCH_BIN
// when set (another build, for a before/after in the same hour), else this
// tree's.
func benchBinary(b *testing.B) string {
	if bin := os.Getenv("ENGRAM_BENCH_BIN"); bin != "" {
		return bin
	}
	return engramBinary(b)
}

// engramBinary builds the real binary once per test run.
func engramBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "engram-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "engram")
		out, err := exec.Command("go", "build", "-o", binPath, "engram").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func writeEvents(t testing.TB, n int, prefix string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	g := gen.New(gen.Config{Seed: 11, Prefix: prefix})
	for range n {
		if _, err := w.Write(g.Next()); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteByte('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// crashAndResume kills an ingest of n events with SIGKILL part-way, runs the
// same ingest again, and checks that every event is archived exactly once
// and indexed, and that verify passes.
func crashAndResume(t *testing.T, n int, args ...string) {
	bin := engramBinary(t)
	input := writeEvents(t, n, fmt.Sprintf("crash%d-", time.Now().UnixNano()))
	cmd := exec.Command(bin, append(append([]string{"ingest"}, args...), input)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the first ingest was not killed mid-way (err %v): %s", err, stderr.String())
	}
	out, err := exec.Command(bin, append(append([]string{"ingest"}, args...), input)...).CombinedOutput()
	if err != nil {
		t.Fatalf("second ingest: %v\n%s", err, tail(out))
	}
	var ingested, dups int
	if _, err := fmt.Sscanf(lastLine(string(out)), "ingested %d, duplicates %d,", &ingested, &dups); err != nil || ingested+dups != n || dups == 0 {
		t.Fatalf("second ingest summary %q: want %d in all, some of them duplicates", lastLine(string(out)), n)
	}
	out, err = exec.Command(bin, append([]string{"verify", "--json"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("verify after crash: %v\n%s", err, tail(out))
	}
	if !strings.Contains(string(out), fmt.Sprintf(`"archivedObjects":%d,"indexDocuments":%d,"agreeing":%d`, n, n, n)) {
		t.Fatalf("verify: %s", tail(out))
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "ingested") {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

func TestKill9MidIngestEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the crash test (tens of thousands of events)")
	}
	crashAndResume(t, 100_000, "--data", t.TempDir())
}
