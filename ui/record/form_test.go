package record

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/themes"
	"engram/ui/internal/fixture"
	"engram/ui/uikit"
)

// eventFromDoc gives back what the index document holds of an event, but
// for what the record form makes afresh or cannot hold: an index document
// field NewIndexDoc gains fails here until one side or the other says so.
func TestEventFromDocKeepsWhatTheIndexHolds(t *testing.T) {
	notKept := map[string]string{
		"event_id": "made at submit", "timestamp": "made at submit",
		"object_storage_key": "made by the archive", "importance_score": "scored by the pipeline",
		"user_id":   "no form field",
		"embedding": "the form sends none", "structured": "the form sends none",
		"reward_score": "0.5 when the event had none: not the event's own", "confidence": "likewise",
	}
	var e model.Event
	if err := json.Unmarshal([]byte(fixture.FullEvent), &e); err != nil {
		t.Fatal(err)
	}
	d := model.NewIndexDoc(&e, 0)
	want, got := fixture.IndexJSON(t, &e), fixture.IndexJSON(t, eventFromDoc(d))
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, skip := notKept[k]; !skip && !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: a duplicate's index document has %v, the original's %v", k, got[k], want[k])
		}
	}
}

func TestMultilineFieldsKeepLineBreaks(t *testing.T) {
	f := newForm()
	in := &f.inputs[fReasoning]
	in.Focus()
	in.Update(tea.PasteMsg{Content: "first paragraph\r\n\r\nsecond"})
	in.Update(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
	in.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if got, want := in.Value(), "first paragraph\n\nsecond\nx"; got != want {
		t.Fatalf("reasoning = %q, want %q", got, want)
	}
	if v := in.View(uikit.NewStyles(themes.Dark()), 80); strings.Contains(v, "\n") || !strings.Contains(v, "paragraph↵↵second↵") {
		t.Fatalf("view %q: want the breaks shown as ↵ on one line", v)
	}
	tool := &f.inputs[fTool]
	tool.Focus()
	tool.Update(tea.PasteMsg{Content: "web\nsearch"})
	if tool.Value() != "web search" {
		t.Fatalf("a one-line field kept a line break: %q", tool.Value())
	}
}
