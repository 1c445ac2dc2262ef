package model_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"engram/model"
)

func decodeFixture(t *testing.T, name string) (*model.Event, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "shapes", name))
	if err != nil {
		t.Fatal(err)
	}
	e, err := model.Decode(b, caseHubOpts)
	if err != nil {
		return nil, err
	}
	return e, e.Validate().Err()
}

// TestShapeFixtures: every valid-*.json decodes and validates clean, and
// every invalid-*.json is refused with the JSON paths named.
func TestShapeFixtures(t *testing.T) {
	want := map[string][]string{
		"invalid-source.json":               {`context.source: "daemon" is not one of session, ambient, system`},
		"invalid-content-link.json":         {"result.content[1].uri: required"},
		"invalid-content-shape.json":        {"result.content: expected an array of content blocks"},
		"invalid-signal.json":               {"payload.severity: required", "payload.affectedServices[1]: expected a non-empty string", "payload.correlationEmbedding[1]: not a finite number"},
		"invalid-casehub-confidence.json":   {"confidence: 1.5 is outside [0, 1]"},
		"invalid-casehub-subthought.json":   {"metadata.sub-thought-1-confidence: 1.2 is outside [0, 1]", "metadata.sub-thought-2-type: sub-thought 2 given, but sub-thought-count is 1"},
		"invalid-casehub-timestamp.json":    {"timestamp: expected an RFC 3339 string or a number"},
		"invalid-casehub-relationship.json": {"metadata.quality-signal: 1.5 is outside [-1, 1]"},
		"invalid-casehub-reflection.json":   {`metadata.reflection-level: "2.5" is not a whole number`},
		"invalid-is-error.json":             {"result.isError: expected a boolean, got string"},
		"invalid-signal-payload.json":       {"payload: expected an object"},
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "shapes", "*.json"))
	if len(files) < 18 {
		t.Fatalf("%d fixtures", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			_, err := decodeFixture(t, name)
			if strings.HasPrefix(name, "valid-") {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			ws, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s (error %v)", name, err)
			}
			for _, w := range ws {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not say %q", err, w)
				}
			}
		})
	}
}

func TestShapeReading(t *testing.T) {
	e, err := decodeFixture(t, "valid-mcp-content.json")
	if err != nil {
		t.Fatal(err)
	}
	if ok := e.Result.Succeeded(); ok == nil || *ok {
		t.Fatalf("isError true without success: succeeded %v, want false", ok)
	}
	d := model.NewIndexDoc(e, 0)
	if d.Success == nil || *d.Success || d.Source != "session" {
		t.Fatalf("index doc success %v source %q", d.Success, d.Source)
	}
	if imp := model.Importance(e); imp != 0.53 { // 0.3 + 0 + 0.2 + 0.3*0.1
		t.Fatalf("importance %v", imp)
	}
	bs := e.Result.Blocks()
	var got []string
	for _, b := range bs {
		got = append(got, b.Describe())
	}
	want := []string{
		"Dashboard loaded.\nTwo panels show errors: checkout and search.",
		"image image/png, 70 bytes (not shown)",
		"link checkout dashboard <https://grafana.example/d/checkout> text/html (not fetched)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("blocks\n got  %q\n want %q", got, want)
	}

	e, err = decodeFixture(t, "valid-operational-signal.json")
	if err != nil {
		t.Fatal(err)
	}
	s := e.Signal()
	if s == nil || s.Severity != "high" || len(s.CorrelationEmbedding) != 4 ||
		!reflect.DeepEqual(s.Seeds(), []string{"service:checkout", "incident:incident-17"}) {
		t.Fatalf("signal %+v seeds %q", s, s.Seeds())
	}

	e, err = decodeFixture(t, "valid-replacement.json")
	if err != nil {
		t.Fatal(err)
	}
	l := model.LinksOf(e.Tags, e.Input.Structured)
	if !reflect.DeepEqual(l.Replaces, []string{"cs-rep-1"}) || !reflect.DeepEqual(l.Critiques, []string{"crit-4"}) {
		t.Fatalf("links %+v", l)
	}
	if model.NewIndexDoc(e, 0).Source != "system" {
		t.Fatal("source")
	}
}

func TestSourceOf(t *testing.T) {
	for _, c := range [][3]string{
		{"", "system:consolidation", "system"},
		{"ambient", "system:ambient:telemetry", "ambient"},
		{"", "sess-1", ""},
		{"session", "sess-1", "session"},
	} {
		if got := model.SourceOf(c[0], c[1]); got != c[2] {
			t.Errorf("SourceOf(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestCaseHubNewerShapes(t *testing.T) {
	e, err := decodeFixture(t, "valid-casehub-confidence.json")
	if err != nil {
		t.Fatal(err)
	}
	if e.Timestamp != "2026-05-08T10:00:00.250Z" {
		t.Errorf("epoch seconds timestamp became %q", e.Timestamp)
	}
	if e.InternalState == nil || e.InternalState.Confidence != 0.65 || model.NewIndexDoc(e, 0).Confidence != 0.65 {
		t.Errorf("confidence not mapped: %+v", e.InternalState)
	}
	m := model.MemoryOf(e.Input.Structured)
	if m == nil || m.OtherAgent != "reviewer-2" || !reflect.DeepEqual(m.Domains(), []string{"relationship"}) {
		t.Fatalf("relationship %+v", m)
	}

	e, err = decodeFixture(t, "valid-casehub-reflection.json")
	if err != nil {
		t.Fatal(err)
	}
	if l := model.LinksOf(e.Tags, e.Input.Structured); !reflect.DeepEqual(l.Sources, []string{"ch-1", "ch-4"}) {
		t.Fatalf("sources %+v", l)
	}

	e, err = decodeFixture(t, "valid-casehub-subthoughts.json")
	if err != nil {
		t.Fatal(err)
	}
	m = model.MemoryOf(e.Input.Structured)
	if m == nil || len(m.SubThoughts) != 2 || m.SubThoughts[0].Type != "hypothesis" || m.SubThoughts[1].Graduated != "false" {
		t.Fatalf("sub-thoughts %+v", m)
	}
	for _, c := range []struct {
		in   string
		want string
	}{
		{`1778234400250`, "2026-05-08T10:00:00.250Z"},
		{`"2026-05-08T10:00:00Z"`, "2026-05-08T10:00:00Z"},
	} {
		in := `{"kind":"observation","agentId":"a","tenantId":"t","caseId":"c","description":"d","subject":"s","timestamp":` + c.in + `}`
		e, err := model.Decode([]byte(in), caseHubOpts)
		if err != nil || e.Timestamp != c.want {
			t.Errorf("timestamp %s: %v %v", c.in, e, err)
		}
	}
}

// TestShapeFixturesFastAndSlow: the fast decoder and Decode's own path
// agree on every fixture of the newer shapes.
func TestShapeFixturesFastAndSlow(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "shapes", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) { agree(t, b) })
	}
}
