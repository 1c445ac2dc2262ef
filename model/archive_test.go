package model_test

import (
	"reflect"
	"testing"

	"engram/model"
)

// The archive is the truth layer: every member engram does not know, at
// every level, survives decode → enrich → archive in its place.
func TestArchiveKeepsUnknownMembers(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string // the archive, compacted
	}{
		{
			name: "members present are replaced in place",
			in: `{
			  "x-vendor": {"build": 7, "flags": ["a", "b"], "nested": {"deep": null}},
			  "eventId": "evt-unknown-1",
			  "timestamp": "2026-05-08T10:00:00+02:00",
			  "type": "tool_result",
			  "context": {"extra": {"region": "eu"}, "sessionId": "s-1", "turnId": "t-1"},
			  "input": {"foo": [1, 2], "text": "hello", "embedding": [9, 9], "structured": {"k": "v"}, "bar": "z"},
			  "action": {"tool": "grep", "parameters": {"q": "x"}, "vendorHint": null},
			  "result": {"output": "ok", "success": false, "retries": 3},
			  "tags": ["t"],
			  "importanceScore": 0,
			  "objectStorageKey": "stale",
			  "zz-trailer": 1.50
			}`,
			want: `{"x-vendor":{"build":7,"flags":["a","b"],"nested":{"deep":null}},"eventId":"evt-unknown-1",` +
				`"timestamp":"2026-05-08T10:00:00+02:00","type":"tool_result",` +
				`"context":{"extra":{"region":"eu"},"sessionId":"s-1","turnId":"t-1"},` +
				`"input":{"foo":[1,2],"text":"hello","embedding":[0.1,0.2],"structured":{"k":"v"},"bar":"z"},` +
				`"action":{"tool":"grep","parameters":{"q":"x"},"vendorHint":null},` +
				`"result":{"output":"ok","success":false,"retries":3},"tags":["t"],"importanceScore":0.73,` +
				`"objectStorageKey":"events/2026/05/08/evt-unknown-1.json","zz-trailer":1.50}`,
		},
		{
			name: "members absent are appended",
			in: `{"eventId":"evt-unknown-2","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			  "context":{"sessionId":"s"},"input":{"text":"hi","foo":{}},"tags":[],"x-end":true}`,
			want: `{"eventId":"evt-unknown-2","timestamp":"2026-05-08T10:00:00Z","type":"user_input",` +
				`"context":{"sessionId":"s"},"input":{"text":"hi","foo":{},"embedding":[0.1,0.2]},"tags":[],"x-end":true,` +
				`"importanceScore":0.24,"objectStorageKey":"events/2026/05/08/evt-unknown-2.json"}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := decode(t, []byte(c.in))
			if ps := e.Validate(); len(ps) > 0 {
				t.Fatal(ps)
			}
			key, err := model.ArchiveKey(e.EventID, e.Timestamp)
			if err != nil {
				t.Fatal(err)
			}
			e.Enrich([]float64{0.1, 0.2}, model.Importance(e), key)
			arch, err := e.ArchiveJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(arch) != c.want {
				t.Fatalf("archive\n got  %s\n want %s", arch, c.want)
			}
			// Member order, top level and nested, is the input's.
			in := []byte(c.in)
			wantTop := memberNames(t, in)
			for _, n := range []string{"importanceScore", "objectStorageKey"} {
				if member(t, in, n) == nil {
					wantTop = append(wantTop, n)
				}
			}
			if got := memberNames(t, arch); !reflect.DeepEqual(got, wantTop) {
				t.Errorf("top-level order %v, want %v", got, wantTop)
			}
			if got, want := memberNames(t, member(t, arch, "context")), memberNames(t, member(t, in, "context")); !reflect.DeepEqual(got, want) {
				t.Errorf("context order %v, want %v", got, want)
			}

			// The archive reads back as the enriched event.
			back := decode(t, arch)
			if ps := back.Validate(); len(ps) > 0 {
				t.Fatal(ps)
			}
			if back.EventID != e.EventID || back.ImportanceScore != e.ImportanceScore ||
				back.ObjectStorageKey != key || !reflect.DeepEqual(back.Input.Embedding, []float64{0.1, 0.2}) {
				t.Errorf("read back: %+v", back)
			}
			if !model.SameEvent(in, arch) {
				t.Error("SameEvent(input, archive) = false")
			}
			// Archiving the archive again changes nothing.
			back.Enrich(e.Input.Embedding, e.ImportanceScore, key)
			again, err := back.ArchiveJSON()
			if err != nil || string(again) != string(arch) {
				t.Errorf("re-archive = %s, %v", again, err)
			}
		})
	}
}

func TestArchiveJSONOfEventBuiltInCode(t *testing.T) {
	e := &model.Event{EventID: "e", Timestamp: "2026-05-08T10:00:00Z", Type: "user_input",
		Context: model.Context{SessionID: "s"}, Input: model.Input{Text: "x"}, Tags: []string{}}
	e.Enrich([]float64{1}, 0.24, "events/2026/05/08/e.json")
	arch, err := e.ArchiveJSON()
	if err != nil {
		t.Fatal(err)
	}
	back := decode(t, arch)
	if ps := back.Validate(); len(ps) > 0 || back.ObjectStorageKey != "events/2026/05/08/e.json" || back.ImportanceScore != 0.24 {
		t.Errorf("archive %s reads back as %+v, %v", arch, back, ps)
	}
}

func TestSameEvent(t *testing.T) {
	base := mutated(t, nil)
	variant := func(f func(ev map[string]any)) []byte { return mutated(t, f) }
	cases := []struct {
		name string
		b    []byte
		want bool
	}{
		{"identical", base, true},
		{"different embedding, importance and key", variant(func(ev map[string]any) {
			block(ev, "input")["embedding"] = []any{0.3, 0.4}
			ev["importanceScore"] = 0.9
			ev["objectStorageKey"] = "events/2026/05/08/evt-1.json"
		}), true},
		{"embedding absent", variant(func(ev map[string]any) { delete(block(ev, "input"), "embedding") }), true},
		{"members in another order and spacing", []byte(`{"tags":["fs"],"importanceScore":0,
			"evaluation":{"userFeedback":"positive","selfAssessedQuality":0.8,"rewardScore":0.9},
			"result":{"latencyMs":12,"success":true,"output":"a b c"},
			"action":{"reasoning":"look first","parameters":{"dir":"/"},"tool":"ls"},
			"internalState":{"confidence":0.5},
			"input":{"structured":{"k":"v"},"embedding":[],"text":"list the files"},
			"context":{"agentId":"a-1","userId":"u-1","sessionId":"s-1"},
			"type":"tool_result","timestamp":"2026-05-08T10:00:00Z","eventId":"evt-1"}`), true},
		{"different reasoning", variant(func(ev map[string]any) { block(ev, "action")["reasoning"] = "look later" }), false},
		{"different text", variant(func(ev map[string]any) { block(ev, "input")["text"] = "list the dirs" }), false},
		{"different structured", variant(func(ev map[string]any) { block(ev, "input")["structured"] = map[string]any{"k": "w"} }), false},
		{"different output", variant(func(ev map[string]any) { block(ev, "result")["output"] = "a b" }), false},
		{"different timestamp", variant(func(ev map[string]any) { ev["timestamp"] = "2026-05-08T10:00:01Z" }), false},
		{"extra unknown member", variant(func(ev map[string]any) { ev["x-vendor"] = 1 }), false},
		{"extra nested unknown member", variant(func(ev map[string]any) { block(ev, "context")["extra"] = "e" }), false},
		{"tags differ", variant(func(ev map[string]any) { ev["tags"] = []any{"fs", "more"} }), false},
		{"not JSON", []byte(`{"eventId":`), false},
	}
	for _, c := range cases {
		if got := model.SameEvent(base, c.b); got != c.want {
			t.Errorf("%s: SameEvent = %v, want %v", c.name, got, c.want)
		}
		if got := model.SameEvent(c.b, base); got != c.want {
			t.Errorf("%s: SameEvent reversed = %v, want %v", c.name, got, c.want)
		}
	}
	// Unparseable objects compare byte for byte.
	if !model.SameEvent([]byte(`{"x":`), []byte(`{"x":`)) || model.SameEvent([]byte(`{"x":`), []byte(`{"y":`)) {
		t.Error("SameEvent of unparseable objects does not compare bytes")
	}
}
