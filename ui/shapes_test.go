package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"engram/model"
)

// shapesWorld is a small world with the newer event shapes of
// model/testdata/shapes: a system session, MCP content, an
// operational signal, a replacement and the event it replaces, CaseHub's
// memory domains and one of a reflection's sources.
func shapesWorld(t testing.TB) (*memReader, *memArchive) {
	r, a := world(4, testBase)
	add := func(b []byte) {
		ev, err := model.Decode(b, model.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ps := ev.Validate(); len(ps) > 0 {
			t.Fatal(ps)
		}
		key, _ := model.ArchiveKey(ev.EventID, ev.Timestamp)
		ev.Enrich(model.StubEmbedding(ev.Input.Text, model.StubDimension), model.Importance(ev), key)
		body, err := ev.ArchiveJSON()
		if err != nil {
			t.Fatal(err)
		}
		a.put(key, body)
		r.add(model.NewIndexDoc(ev, 0))
	}
	add([]byte(`{"eventId":"cs-rep-1","timestamp":"2026-05-08T10:04:00.000Z","type":"consolidation_output",
		"context":{"sessionId":"system:consolidation"},"input":{"text":"Checkout errors were caused by the cache"},"tags":[]}`))
	add([]byte(`{"kind":"observation","eventId":"ch-1","timestamp":"2026-05-08T10:09:00Z","agentId":"agent-7","tenantId":"acme",
		"caseId":"case-42","description":"Payments timed out twice","subject":"payments"}`))
	for _, name := range []string{"valid-system-source.json", "valid-mcp-content.json", "valid-operational-signal.json",
		"valid-replacement.json", "valid-casehub-confidence.json", "valid-casehub-reflection.json", "valid-casehub-subthoughts.json"} {
		b, err := os.ReadFile(filepath.Join("..", "model", "testdata", "shapes", name))
		if err != nil {
			t.Fatal(err)
		}
		add(b)
	}
	return r, a
}

// openShaped opens the event id in the detail view.
func openShaped(t *testing.T, m *Model, id string) {
	t.Helper()
	settle(t, m, m.stream.SelectID(id))
	press(t, m, "enter")
	if d := m.detail.Doc(); d == nil || d.EventID != id {
		t.Fatalf("detail shows %v, want %s", d, id)
	}
}

// TestGoldenShapes: the newer shapes drawn at 80×24: the stream's source
// marks, and the detail's readable "shown" member and links line.
func TestGoldenShapes(t *testing.T) {
	scenes := []struct {
		name string
		open string
		keys []string
	}{
		{"stream", "", nil},
		{"content", "cs-mcp-1", nil},
		{"signal", "cs-sig-1", nil},
		{"subthoughts", "ch-s-1", nil},
		{"reflection", "ch-r-1", nil},
		{"relationship", "ch-c-1", nil},
		{"replacement", "cs-rep-2", nil},
		{"replaced", "cs-rep-2", []string{"1"}},
	}
	for _, sc := range scenes {
		t.Run(sc.name+"_80x24", func(t *testing.T) {
			r, a := shapesWorld(t)
			m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
			if sc.open != "" {
				openShaped(t, m, sc.open)
			}
			press(t, m, sc.keys...)
			out := ansi.Strip(m.View().Content)
			if sc.open == "" { // the rows: the status and key lines are the stream's own goldens'
				out = strings.Join(strings.Split(out, "\n")[:15], "\n")
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}

// TestShapesLinks: the replacement chain is walked both ways with the
// digit keys, a reflection's source the index lacks is named but not
// followed, and a source it holds opens.
func TestShapesLinks(t *testing.T) {
	r, a := shapesWorld(t)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	openShaped(t, m, "cs-rep-2")
	view := ansi.Strip(m.View().Content)
	if !strings.Contains(view, "1 replaces cs-rep-1") || !strings.Contains(view, "2 critique crit-4 (not held)") {
		t.Fatalf("links line:\n%s", view)
	}
	press(t, m, "1")
	if d := m.detail.Doc(); d.EventID != "cs-rep-1" {
		t.Fatalf("1 opened %s", d.EventID)
	}
	if view := ansi.Strip(m.View().Content); !strings.Contains(view, "1 replaced by cs-rep-2") {
		t.Fatalf("the replaced event does not name its replacement:\n%s", view)
	}
	press(t, m, "1")
	if d := m.detail.Doc(); d.EventID != "cs-rep-2" {
		t.Fatalf("back: %s", d.EventID)
	}
	press(t, m, "2")
	if d := m.detail.Doc(); d.EventID != "cs-rep-2" || !strings.Contains(m.status, "not in this index") {
		t.Fatalf("an unheld link: doc %s, status %q", d.EventID, m.status)
	}

	press(t, m, "esc")
	openShaped(t, m, "ch-r-1")
	view = ansi.Strip(m.View().Content)
	if !strings.Contains(view, "1 source ch-1") || !strings.Contains(view, "2 source ch-4 (not held)") {
		t.Fatalf("reflection sources:\n%s", view)
	}
	press(t, m, "1")
	if d := m.detail.Doc(); d.EventID != "ch-1" {
		t.Fatalf("source: %s", d.EventID)
	}
}
