package systest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"engram/ingest/gen"
)

// badCase is one hostile line and what the report must say about it.
type badCase struct {
	name string
	line func(good string) string
	want string // in the FILE:LINE: report of that line
}

var eventID = regexp.MustCompile(`"eventId":"[^"]*"`)

var badCases = []badCase{
	{"malformed JSON", func(g string) string { return `{"eventId": "x",, }` }, "invalid JSON at byte"},
	{"byte-order mark mid-file", func(g string) string { return "\xef\xbb\xbf" + g }, "byte-order mark"},
	{"invalid UTF-8", func(g string) string { return strings.Replace(g, `"text":"`, "\"text\":\"\xff\xfe", 1) }, "invalid UTF-8 at byte"},
	{"wrong type", func(g string) string { return strings.Replace(g, `"tags":[`, `"tags":"oops","x":[`, 1) }, "tags: expected an array"},
	{"missing required fields", func(g string) string {
		return `{"eventId":"lonely","timestamp":"2026-05-08T10:00:00Z","type":"user_input"}`
	}, "context: required"},
	{"out of range", func(g string) string {
		return strings.Replace(g, `"selfAssessedQuality":`, `"selfAssessedQuality":1.5,"y":`, 1)
	}, "evaluation.selfAssessedQuality: 1.5 is outside [0, 1]"},
	{"non-finite number", func(g string) string { return strings.Replace(g, `"importanceScore":0`, `"importanceScore":1e999`, 1) }, "importanceScore: 1e999 is not a finite number"},
	{"timestamp without zone", func(g string) string {
		return strings.Replace(g, `Z","type"`, `","type"`, 1)
	}, "is not an RFC 3339 timestamp with a zone"},
	{"path traversal", func(g string) string {
		return eventID.ReplaceAllString(g, `"eventId":"../../etc/passwd"`)
	}, "must not contain / or"},
	{"10 MB text", func(g string) string {
		return strings.Replace(g, `"text":"`, `"text":"`+strings.Repeat("a", 10<<20), 1)
	}, "longer than the 4194304-byte limit"},
	{"100,000 tags", func(g string) string {
		return strings.Replace(g, `"tags":[`, `"tags":[`+strings.Repeat(`"t",`, 100_000), 1)
	}, "tags: 100001 tags, at most 1000 allowed"},
	{"structured nested 100,000 deep", func(g string) string {
		deep := `"deep":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
		if strings.Contains(g, `"structured":{`) {
			return strings.Replace(g, `"structured":{`, `"structured":{`+deep+`,`, 1)
		}
		return strings.Replace(g, `"input":{`, `"input":{"structured":{`+deep+`},`, 1)
	}, "nested too deeply"},
	{"single 256 MB line", func(g string) string {
		return strings.Replace(g, `"text":"`, `"text":"`+strings.Repeat("b", 256<<20), 1)
	}, "longer than the 4194304-byte limit"},
}

// TestBadInputCatalogue puts each hostile line among good ones, runs the
// real binary, and checks that each gets its own clear error while every
// good line is ingested, with peak memory bounded.
func TestBadInputCatalogue(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 256 MB input")
	}
	bin := engramBinary(t)
	path := filepath.Join(t.TempDir(), "catalogue.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	g := gen.New(gen.Config{Seed: 5, Prefix: "cat-"})
	lineOf := map[string]int{}
	line, good := 0, 0
	emit := func(s string) { _, _ = w.WriteString(s); _ = w.WriteByte('\n'); line++ }
	first := string(g.Next())
	emit(first)
	good++
	for _, c := range badCases {
		emit(c.line(string(g.Next())))
		lineOf[c.name] = line
		emit(string(g.Next()))
		good++
	}
	// The same eventId twice with different content: one conflicts. Which
	// one is not fixed: the two are in the pipeline together, and the
	// first archived is kept.
	emit(strings.Replace(first, `"tags":[`, `"tags":["changed",`, 1))
	lineOf["same eventId, different content"] = line
	// A truncated last line.
	last := string(g.Next())
	_, _ = w.WriteString(last[:len(last)/2])
	line++
	lineOf["truncated last line"] = line
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	cmd := exec.Command(bin, "ingest", "--data", t.TempDir(), path)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := watchPeakRSS(cmd.Process.Pid)
	err = cmd.Wait()
	out := []byte(buf.String())
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d (err %v), want 1:\n%s", code, err, tail(out))
	}
	report := string(out)
	cases := append([]badCase{}, badCases...)
	cases = append(cases, badCase{name: "same eventId, different content", want: "conflict"}, badCase{name: "truncated last line", want: "unexpected end of JSON input"})
	for _, c := range cases {
		prefix := fmt.Sprintf("%s:%d: ", path, lineOf[c.name])
		other := fmt.Sprintf("%s:1: ", path) // the conflict's first copy
		if !containsLine(report, prefix, c.want) && !(c.want == "conflict" && containsLine(report, other, c.want)) {
			t.Errorf("%s: no line %q…%q in the report", c.name, prefix, c.want)
		}
	}
	wantSummary := fmt.Sprintf("ingested %d, duplicates 0, rejected %d, failed 0", good, len(cases))
	if !strings.Contains(report, wantSummary) {
		t.Errorf("summary: want %q in\n%s", wantSummary, tail(out))
	}
	rss := <-peak
	t.Logf("peak RSS %.1f MB", float64(rss)/(1<<20))
	if rss > 300<<20 {
		t.Errorf("peak RSS %d MB, over the 300 MB bound", rss>>20)
	}
}

func containsLine(report, prefix, want string) bool {
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// watchPeakRSS samples the VmHWM (peak resident set) of a running process
// until it exits. ru_maxrss would not do: for a child it counts the parent's
// size at fork, and this test's parent has just built a 256 MB line.
func watchPeakRSS(pid int) <-chan int64 {
	ch := make(chan int64, 1)
	go func() {
		var peak int64
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil {
				ch <- peak
				return
			}
			for _, l := range strings.Split(string(b), "\n") {
				var kb int64
				if _, err := fmt.Sscanf(l, "VmHWM: %d kB", &kb); err == nil && kb*1024 > peak {
					peak = kb * 1024
				}
			}
			if strings.Contains(string(b), "State:\tZ") {
				ch <- peak
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return ch
}
