package systest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"engram/backend/sqliteindex"
	"engram/backend/sqliteindex/sqlitetest"
	"engram/ingest/gen"
	"engram/model"
)

// The terminal benchmarks run the real binary in a tmux pane (its own
// server on a socket in the benchmark's temporary directory) and read the
// screen with capture-pane. Run them one iteration each:
//
//	go test -run '^$' -bench 'FirstFrame|FollowMillionRSS|DetailOpen$' -benchtime=1x .
//
// Screen times include the tmux round trips (a capture-pane is a fork and
// exec of the tmux client, about 2-4 ms) and the 5 ms polling step.

// uiTmux is a tmux server of its own.
type uiTmux struct {
	tb   testing.TB
	sock string
}

func startUITmux(b *testing.B) *uiTmux {
	b.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux is not installed: skipping the terminal benchmarks")
	}
	t := &uiTmux{tb: b, sock: filepath.Join(b.TempDir(), "tmux.sock")}
	// A keep-alive session holds the server up between panes, so starting
	// the binary never includes starting the server.
	t.must("-f", "/dev/null", "new-session", "-d", "-s", "keep", "-x", "80", "-y", "24", "sleep 86400")
	b.Cleanup(func() { _ = exec.Command("tmux", "-S", t.sock, "kill-server").Run() })
	t.must("set-option", "-g", "escape-time", "0")
	t.must("set-option", "-g", "remain-on-exit", "on") // a crash stays readable
	return t
}

func (t *uiTmux) cmd(args ...string) ([]byte, error) {
	return exec.Command("tmux", append([]string{"-S", t.sock}, args...)...).CombinedOutput()
}

func (t *uiTmux) must(args ...string) string {
	t.tb.Helper()
	out, err := t.cmd(args...)
	if err != nil {
		t.tb.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// start runs argv in a new w×h session name, with a clean environment (no
// config file, no ENGRAM_* or S3_* variables from the caller).
func (t *uiTmux) start(name string, w, h int, home string, argv ...string) {
	t.tb.Helper()
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	line := fmt.Sprintf(`exec env -i HOME=%[1]s XDG_CONFIG_HOME=%[1]s XDG_DATA_HOME=%[1]s LANG=C.UTF-8 TERM="$TERM" %s`, home, strings.Join(q, " "))
	t.must("new-session", "-d", "-s", name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), line)
}

func (t *uiTmux) capture(name string) string {
	t.tb.Helper()
	return t.must("capture-pane", "-p", "-t", name)
}

func (t *uiTmux) keys(name string, keys ...string) {
	t.tb.Helper()
	t.must(append([]string{"send-keys", "-t", name}, keys...)...)
}

func (t *uiTmux) pid(name string) int {
	t.tb.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(t.must("list-panes", "-t", name, "-F", "#{pane_pid}")))
	if err != nil {
		t.tb.Fatal(err)
	}
	return pid
}

// stop kills the session and waits for its process to be gone, so that
// the next run does not share the CPU with it.
func (t *uiTmux) stop(name string, pid int) {
	_, _ = t.cmd("kill-session", "-t", name)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return
		}
	}
}

// waitScreen polls the pane every step until ok holds, and returns when
// (after the capture that saw it) and the screen.
func (t *uiTmux) waitScreen(name string, step, timeout time.Duration, ok func(string) bool) (time.Time, string) {
	t.tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		next := time.Now().Add(step)
		s := t.capture(name)
		if ok(s) {
			return time.Now(), s
		}
		if time.Now().After(deadline) {
			dead, _ := t.cmd("display-message", "-p", "-t", name, "#{pane_dead} #{pane_dead_status}")
			t.tb.Fatalf("screen never got there in %v (pane dead/status: %s):\n%s", timeout, strings.TrimSpace(string(dead)), s)
		}
		time.Sleep(time.Until(next))
	}
}

// ubStreamShown: the stream's column header and, under it, the selected row.
func ubStreamShown(s string) bool {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "time" && f[1] == "type" && f[2] == "agent" {
			for _, r := range lines[i+1:] {
				if strings.HasPrefix(strings.TrimSpace(r), "›") {
					return true
				}
			}
		}
	}
	return false
}

// ubSelectedRow is the line of the stream's selected row, and its number.
func ubSelectedRow(s string) (string, int) {
	for i, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "›") {
			return l, i
		}
	}
	return "", -1
}

func ubFirst[T, U any](t T, _ U) T { return t }

func ubArchiveShown(s string) bool {
	return strings.Contains(s, "✓ archive events/") && strings.Contains(s, `"archive": {`)
}

func ubPercentiles(ds []time.Duration) (p50, p99 float64) {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 { return float64(s[int(q*float64(len(s)-1)+0.5)]) / 1e6 }
	return at(0.50), at(0.99)
}

// ubGenDocs turns the next n generated events into index documents.
func ubGenDocs(tb testing.TB, g *gen.Generator, n int) []*model.IndexDoc {
	docs := make([]*model.IndexDoc, n)
	opts := model.DecodeOptions{Now: time.Now, NewID: func() string { return "" }}
	for i := range docs {
		ev, err := model.Decode(g.Next(), opts)
		if err != nil {
			tb.Fatal(err)
		}
		key, err := model.ArchiveKey(ev.EventID, ev.Timestamp)
		if err != nil {
			tb.Fatal(err)
		}
		ev.Enrich(nil, ev.ImportanceScore, key)
		docs[i] = model.NewIndexDoc(ev, 0)
	}
	return docs
}

func ubWriteDocs(tb testing.TB, db *sqliteindex.DB, docs []*model.IndexDoc) {
	for _, r := range db.Write(context.Background(), docs) {
		if r.Err != nil {
			tb.Fatal(r.Err)
		}
	}
}

// millionUIIndex is $TMPDIR/engram-bench-ui-1m/index.db, a million
// documents: a copy of the query benchmarks' database when that is there
// (a copy, because the inspector opens its index for writing and would run
// PRAGMA optimize on the shared file), else built from generated events.
func millionUIIndex(b *testing.B) string {
	const n = 1_000_000
	dir := filepath.Join(os.TempDir(), "engram-bench-ui-1m")
	path := filepath.Join(dir, "index.db")
	marker := path + ".ok"
	if _, err := os.Stat(marker); err == nil {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	start := time.Now()
	src := filepath.Join(os.TempDir(), "engram-bench-1m.db") // query/sqlite's benchPath
	if _, err := os.Stat(src + ".v1"); err == nil {
		b.Logf("copying %s to %s (once)", src, path)
		if err := ubCopyFile(src, path); err != nil {
			b.Fatal(err)
		}
		if got := sqlitetest.Count(path); got != n {
			b.Logf("the copy holds %d documents: building instead", got)
			os.Remove(path)
		}
	}
	if _, err := os.Stat(path); err != nil {
		b.Logf("building %s (%d generated documents, once)", path, n)
		db, err := sqliteindex.Open(path, sqliteindex.Options{})
		if err != nil {
			b.Fatal(err)
		}
		g := gen.New(gen.Config{Seed: 1, Prefix: "ui1m-"})
		for i := 0; i < n; i += 1000 {
			ubWriteDocs(b, db, ubGenDocs(b, g, 1000))
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("ready in %s", time.Since(start).Round(time.Second))
	return path
}

func ubCopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst + ".tmp")
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(dst+".tmp", dst)
}

// BenchmarkFirstFrame: from starting `engram --data DIR` over a million
// documents to a screen showing the stream's header and rows, 10 runs.
func BenchmarkFirstFrame(b *testing.B) {
	tm := startUITmux(b)
	index := millionUIIndex(b)
	bin := engramBinary(b)
	home, data := b.TempDir(), b.TempDir()
	if err := os.Symlink(index, filepath.Join(data, "index.db")); err != nil {
		b.Fatal(err)
	}
	const runs = 10
	var ds, counted []time.Duration
	b.ResetTimer()
	for i := range b.N * runs {
		name := fmt.Sprintf("ff%d", i)
		start := time.Now()
		tm.start(name, 160, 48, home, bin, "--data", data)
		at, _ := tm.waitScreen(name, 5*time.Millisecond, 30*time.Second, ubStreamShown)
		ds = append(ds, at.Sub(start))
		// The header's document count comes later (a count(*) off the UI
		// goroutine): timed too, apart.
		at, _ = tm.waitScreen(name, 5*time.Millisecond, 30*time.Second, func(s string) bool {
			return strings.Contains(s, "1,000,000 docs")
		})
		counted = append(counted, at.Sub(start))
		tm.stop(name, tm.pid(name))
	}
	b.StopTimer()
	p50, p99 := ubPercentiles(ds)
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	c50, _ := ubPercentiles(counted)
	b.ReportMetric(c50, "count-p50-ms")
	b.Logf("first frame over 1M docs, %d runs: %v", len(ds), ds)
	b.Logf("count in the header: %v", counted)
}

// BenchmarkFollowMillionRSS: engram follows an index while this process
// writes ENGRAM_BENCH_FOLLOW_DOCS (default 1,000,000) documents into it in
// batches of 1000; reports engram's peak RSS (VmHWM) and the write rate.
func BenchmarkFollowMillionRSS(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("ENGRAM_BENCH_FOLLOW_DOCS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			b.Fatal(err)
		}
	}
	n = max(1000, n/1000*1000)
	tm := startUITmux(b)
	bin := engramBinary(b)
	for i := range b.N {
		home, data := b.TempDir(), b.TempDir()
		path := filepath.Join(data, "index.db")
		db, err := sqliteindex.Open(path, sqliteindex.Options{})
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
		name := fmt.Sprintf("follow%d", i)
		tm.start(name, 160, 48, home, bin, "--data", data)
		tm.waitScreen(name, 5*time.Millisecond, 30*time.Second, func(s string) bool {
			return strings.Contains(s, "following")
		})
		pid := tm.pid(name)
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) != "engram" {
			b.Fatalf("pane process %d is %q, not engram", pid, comm)
		}
		peak := watchPeakRSS(pid)

		db, err = sqliteindex.Open(path, sqliteindex.Options{})
		if err != nil {
			b.Fatal(err)
		}
		g := gen.New(gen.Config{Seed: 5, Prefix: fmt.Sprintf("f%d-", time.Now().UnixNano())})
		var writing time.Duration
		var last *model.IndexDoc
		start := time.Now()
		for k := 0; k < n; k += 1000 {
			docs := ubGenDocs(b, g, 1000)
			t0 := time.Now()
			ubWriteDocs(b, db, docs)
			writing += time.Since(t0)
			last = docs[len(docs)-1]
		}
		wall := time.Since(start)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		want := ubThousands(int64(n)) + " docs"
		caught, s := tm.waitScreen(name, 50*time.Millisecond, 5*time.Minute, func(s string) bool {
			return strings.Contains(s, want)
		})
		catchUp := caught.Sub(start.Add(wall))
		time.Sleep(2 * time.Second) // sample after the catch-up too
		var status []byte
		status, _ = os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		tm.stop(name, pid)
		peakMB := float64(<-peak) / (1 << 20)
		b.ReportMetric(peakMB, "peakRSS-MB")
		b.ReportMetric(float64(n)/wall.Seconds(), "docs/s")
		b.ReportMetric(float64(n)/writing.Seconds(), "write-docs/s")
		b.ReportMetric(catchUp.Seconds(), "catchup-s")
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "VmHWM") {
				b.Logf("at the end: %s", strings.Join(strings.Fields(l), " "))
			}
		}
		b.Logf("%d docs written in %v (Write calls %v); header %q reached %v after the last write; newest %s; selected row %q",
			n, wall.Round(time.Millisecond), writing.Round(time.Millisecond), want, catchUp.Round(time.Millisecond),
			last.EventID, strings.TrimSpace(ubFirst(ubSelectedRow(s))))
	}
}

func ubThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// BenchmarkDetailOpen: Enter on a stream row until its archived event (in
// the directory store) is on screen, 30 rows of an `engram demo` data set.
func BenchmarkDetailOpen(b *testing.B) {
	tm := startUITmux(b)
	bin := engramBinary(b)
	home, data := b.TempDir(), filepath.Join(b.TempDir(), "data")
	demo := exec.Command(bin, "demo", "--data", data)
	demo.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_DATA_HOME=" + home}
	if out, err := demo.CombinedOutput(); err != nil {
		b.Fatalf("engram demo: %v\n%s", err, out)
	}
	const runs = 30
	var ds []time.Duration
	for i := range b.N {
		name := fmt.Sprintf("detail%d", i)
		tm.start(name, 160, 48, home, bin, "--data", data)
		_, s := tm.waitScreen(name, 5*time.Millisecond, 30*time.Second, ubStreamShown)
		pid := tm.pid(name)
		for range runs {
			_, row := ubSelectedRow(s)
			start := time.Now()
			tm.keys(name, "Enter")
			at, _ := tm.waitScreen(name, 5*time.Millisecond, 10*time.Second, ubArchiveShown)
			ds = append(ds, at.Sub(start))
			tm.keys(name, "Escape")
			tm.waitScreen(name, 5*time.Millisecond, 10*time.Second, ubStreamShown)
			tm.keys(name, "Down")
			_, s = tm.waitScreen(name, 5*time.Millisecond, 10*time.Second, func(s string) bool {
				_, at := ubSelectedRow(s)
				return ubStreamShown(s) && at != row
			})
		}
		tm.stop(name, pid)
	}
	p50, p99 := ubPercentiles(ds)
	b.Logf("detail open, %d runs: %v", len(ds), ds)
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")

	// The floor of this method: keys echoed by the terminal itself (cat
	// under the pty's echo), seen by the same send-keys + capture polling.
	tm.start("floor", 80, 24, home, "cat")
	var floor []time.Duration
	for i := range runs {
		want := fmt.Sprintf("k%03d", i)
		start := time.Now()
		tm.keys("floor", "-l", want)
		at, _ := tm.waitScreen("floor", 5*time.Millisecond, 10*time.Second, func(s string) bool {
			return strings.Contains(s, want)
		})
		floor = append(floor, at.Sub(start))
		tm.keys("floor", "Enter")
	}
	f50, _ := ubPercentiles(floor)
	b.ReportMetric(f50, "tmux-floor-p50-ms")
}
