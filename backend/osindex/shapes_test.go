package osindex

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"engram/model"
	"engram/query"
)

// TestOlderEngramIndexGainsSource: an index an engram before the source
// field made (its mapping and documents, no source) is upgraded in place
// by the next open: one PUT _mapping adds source as a keyword, every
// other field stays as it was, the old documents stay readable, and
// source:system finds both the old documents of system: sessions and the
// new ones that say it.
func TestOlderEngramIndexGainsSource(t *testing.T) {
	name := testIndex(t)
	old := properties(false, 8, "", "", "")
	delete(old, fSource)
	body, _ := json.Marshal(map[string]any{
		"settings": map[string]any{"number_of_shards": 1, "number_of_replicas": 0},
		"mappings": map[string]any{"properties": old},
	})
	mustAdmin(t, osURL(t), "PUT", "/"+name, string(body))
	// Documents an older engram wrote: extensions, no source.
	oldSys := testDoc("old-sys")
	oldSys.SessionID = "system:consolidation"
	oldSession := testDoc("old-session")
	var bulk strings.Builder
	for _, d := range []*model.IndexDoc{oldSys, oldSession} {
		bulk.WriteString(`{"create":{"_index":"` + name + `","_id":"` + d.EventID + `"}}` + "\n")
		c := *d
		c.IngestedAt = "2026-05-08T22:31:26.000Z"
		b, _ := json.Marshal(&c)
		bulk.Write(b)
		bulk.WriteByte('\n')
	}
	mustAdmin(t, osURL(t), "POST", "/_bulk?refresh=true", bulk.String())
	before := mapping(t, name)
	if before[fSource] != nil {
		t.Fatal("the older mapping has source already")
	}

	var l logs
	cfg := testConfig(t, name)
	cfg.Logf = l.logf
	cfg.Refresh = "true"
	ix := openTest(t, cfg)
	if !strings.Contains(l.String(), "added fields source to index") {
		t.Errorf("log:\n%s", l.String())
	}
	after := mapping(t, name)
	for f, def := range before {
		if !reflect.DeepEqual(after[f], def) {
			t.Errorf("%s changed: %v -> %v", f, def, after[f])
		}
	}
	if !reflect.DeepEqual(after[fSource], map[string]any{"type": "keyword"}) || len(after) != len(before)+1 {
		t.Errorf("source %v; %d fields after, %d before", after[fSource], len(after), len(before))
	}

	newSys := testDoc("new-sys")
	newSys.SessionID, newSys.Source = "system:ambient:telemetry", model.SourceAmbient
	newSession := testDoc("new-session")
	newSession.Source = model.SourceSession
	mustWrite(t, ix, newSys, newSession)

	r, err := readerOn(context.Background(), ix, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string][]string{
		"source:system":                 {"old-sys"},
		"source:ambient":                {"new-sys"},
		"source:session":                {"new-session"},
		"-source:system":                {"new-session", "new-sys", "old-session"},
		"source:ambient -source:system": {"new-sys"},
	} {
		p, err := r.Search(context.Background(), src, "", 10)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got := idsOf(p.Docs)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
	d, err := r.Document(context.Background(), "new-sys")
	if err != nil || d.Source != model.SourceAmbient {
		t.Fatalf("read back: %+v %v", d, err)
	}
}
