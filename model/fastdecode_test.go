package model_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"engram/ingest/gen"
	"engram/model"
)

var fastOpt = model.DecodeOptions{
	Now:   func() time.Time { return time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC) },
	NewID: func() string { return "fuzz-id" },
}

// fastCases are events at the edges where encoding/json/v2 and the slow
// path's rules around encoding/json could part: nulls against absence,
// names that differ only in case, names given twice, text that is not
// UTF-8, numbers out of range, the CaseHub shape. fast says whether the
// fast path is to decode the event itself.
var fastCases = []struct {
	name string
	fast bool
	in   string
}{
	{"every block", true, baseEvent},
	{"blocks null", true, `{"eventId":"e","timestamp":"2026-05-08T10:00:00Z","type":"user_input","context":null,"input":null,"tags":null,"importanceScore":null,"internalState":null,"action":null,"result":null,"evaluation":null}`},
	{"members null", true, `{"eventId":"e","timestamp":"t","type":"x","context":{"sessionId":null},"input":{"text":null,"embedding":null,"structured":null},"action":{"parameters":null},"result":{"output":null,"success":null,"latencyMs":null},"evaluation":{"rewardScore":null,"selfAssessedQuality":null},"internalState":{"confidence":null,"emotionalVector":null}}`},
	{"empty blocks", true, `{"eventId":"e","context":{},"input":{"embedding":[]},"internalState":{},"result":{},"evaluation":{},"tags":[]}`},
	{"nulls in arrays", true, `{"eventId":"e","input":{"embedding":[1,null,2.5e-3,-0]},"tags":["a",null,""]}`},
	{"escapes", true, `{"eventId":"e\u00e9\/\"\\\n","input":{"text":"\u2028\t\u0000x"},"x-vendor":{"deep":[{"a":1}]}}`},
	{"unknown members kept", true, `{"eventId":"e","zz":[1,{"y":null}],"input":{"foo":"bar","text":"t"}}`},
	{"an escape in a member name", true, `{"eventId":"e","importance\u0053core":0.5,"context":{"sessionId":"s"},"input":{"text":"t"},"tags":[]}`},
	{"zero where given", true, `{"eventId":"e","context":{"sessionId":"s"},"input":{"text":"t"},"importanceScore":0.5,"internalState":{"confidence":0},"result":{"output":""},"evaluation":{"rewardScore":0,"selfAssessedQuality":0.5}}`},
	{"names folding to known ones", true, `{"eventId":"e","EventID":"x","Input":{"text":"no"},"input":{"TEXT":"x","text":"yes"},"context":{"SessionId":"x","sessionId":"s"}}`},
	{"a known name twice", false, `{"eventId":"a","eventId":"b"}`},
	{"a known name twice, nested", false, `{"eventId":"a","input":{"text":"x","text":"y"}}`},
	{"an unknown name twice", false, `{"eventId":"a","x":1,"x":2}`},
	{"a name twice in emotionalVector", false, `{"eventId":"a","internalState":{"emotionalVector":{"joy":1,"joy":2}}}`},
	{"a name twice in structured", false, `{"eventId":"a","input":{"structured":{"k":1,"k":2}}}`},
	{"text not UTF-8", false, "{\"eventId\":\"a\",\"input\":{\"text\":\"\xff\xfe\"}}"},
	{"a lone surrogate", false, `{"eventId":"a","input":{"text":"\ud800"}}`},
	{"a number out of range", false, `{"eventId":"a","importanceScore":1e400}`},
	{"a string for a number", false, `{"eventId":"a","importanceScore":"0.5"}`},
	{"a number for a string", false, `{"eventId":5}`},
	{"a string for the result block", false, `{"eventId":"a","result":"ok"}`},
	{"the CaseHub shape", false, `{"kind":"outcome","eventType":"done","eventId":"c1","timestamp":"2026-05-08T10:00:00Z","caseId":"case-1","description":"closed","result":"ok"}`},
	{"CaseHub members beside input", true, `{"eventId":"e","kind":"x","description":"d","caseId":"c","input":{"text":"t"}}`},
	{"trailing data", false, `{"eventId":"a"} x`},
	{"not an object", false, `["eventId"]`},
	{"deeply nested structured", false, `{"eventId":"a","input":{"structured":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`},
}

// TestDecodeFast holds both paths to the same event, and the fast one to
// the events it is meant for: generated events all take it.
func TestDecodeFast(t *testing.T) {
	for _, c := range fastCases {
		t.Run(c.name, func(t *testing.T) {
			fast := agree(t, []byte(c.in))
			if (fast != nil) != c.fast {
				t.Fatalf("fast path took it: %v, want %v", fast != nil, c.fast)
			}
		})
	}
	g := gen.New(gen.Config{Seed: 3, Prefix: "fast-"})
	for range 2000 {
		if agree(t, g.Next()) == nil {
			t.Fatal("a generated event left to the slow path")
		}
	}
}

// agree fails unless the fast path's event, where it decodes one, is the
// slow path's; it returns the fast path's.
func agree(t *testing.T, data []byte) *model.Event {
	t.Helper()
	fast, slow, err := model.DecodeFastAndSlow(data, fastOpt)
	if err == nil && slow != nil {
		sameArchive(t, data, *slow)
	}
	if fast == nil {
		return nil
	}
	if err != nil {
		t.Fatalf("fast path decoded %q, which the slow path refuses: %v", data, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("paths disagree on %q:\n fast %#v\n slow %#v", data, *fast, *slow)
	}
	return fast
}

// sameArchive fails unless ArchiveJSON of the decoded event ev (a copy:
// enriching it changes it) is what the reference implementation writes.
func sameArchive(t *testing.T, data []byte, ev model.Event) {
	t.Helper()
	ev.Enrich([]float64{0.5, -1e-7, 3}, 0.25, "2026/05/08/e.json")
	got, gotErr := ev.ArchiveJSON()
	want, wantErr := model.ArchiveJSONReference(&ev)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("archiving %q: error %v, the reference's %v", data, gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("archiving %q:\n got %s\nwant %s", data, got, want)
	}
}

// FuzzDecodeFast drives both paths with arbitrary bytes, seeded with
// fastCases and the corpus of FuzzDecode.
func FuzzDecodeFast(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c.in))
	}
	for _, s := range corpus(f, "testdata/fuzz/FuzzDecode") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { agree(t, data) })
}

// corpus reads the []byte inputs of a fuzz corpus directory.
func corpus(f *testing.F, dir string) [][]byte {
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
				if err != nil {
					f.Fatalf("%s: %v", name, err)
				}
				out = append(out, []byte(s))
			}
		}
	}
	return out
}
