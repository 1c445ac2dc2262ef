package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/ingest"
	"engram/model"
)

var _ ingest.Publisher = (*Publisher)(nil)

func TestPublishReadBack(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	setup(t, cfg, 3, cfg.Topics.Enriched, cfg.Topics.Indexed, cfg.Topics.Audit)
	p, err := NewPublisher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// franz-go times delivery from the record timestamp: it must be now.
	fixed := time.Now().UTC().Truncate(time.Millisecond).Add(123456 * time.Nanosecond)
	p.now = func() time.Time { return fixed }

	enriched := []model.Enriched{
		{EventID: "ev-1", Timestamp: "2026-11-30T08:00:00Z", ImportanceScore: 0.75, EmbeddingDimension: 3, ObjectStorageKey: "experiences/2026/11/30/ev-1.json", Tags: []string{"a", "<b>"}},
		{EventID: "ev-2", Timestamp: "2026-11-30T08:00:01Z", ImportanceScore: 0.5, EmbeddingDimension: 3, ObjectStorageKey: "experiences/2026/11/30/ev-2.json", Tags: []string{}},
		{EventID: "ev-3", Timestamp: "2026-11-30T08:00:02Z", ImportanceScore: 1, EmbeddingDimension: 3, ObjectStorageKey: "experiences/2026/11/30/ev-3.json", Tags: []string{}},
	}
	indexed := []model.Indexed{
		{EventID: "ev-1", Timestamp: "2026-11-30T08:00:00Z", Index: "experience_events", ObjectStorageKey: "experiences/2026/11/30/ev-1.json"},
		{EventID: "ev-2", Timestamp: "2026-11-30T08:00:01Z", Index: "experience_events", ObjectStorageKey: "experiences/2026/11/30/ev-2.json"},
	}
	ev := &model.Event{Context: model.Context{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}}
	traces := map[string]Trace{
		"ev-1": TraceOf(ev),
		"ev-2": {TraceID: "0af7651916cd43dd8448eb211c80319c", State: "congo=t61rcWkgMzE"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.PublishTraced(ctx, enriched, indexed, traces); err != nil {
		t.Fatal(err)
	}

	got := readAll(t, cfg, 2*(len(enriched)+len(indexed)), cfg.Topics.Enriched, cfg.Topics.Indexed, cfg.Topics.Audit)
	byKey := func(rs []*Record) map[string]*Record {
		m := map[string]*Record{}
		for _, r := range rs {
			if m[string(r.Key)] != nil {
				t.Errorf("%s: key %s twice", r.Topic, r.Key)
			}
			m[string(r.Key)] = r
		}
		return m
	}
	wantHeaders := map[string]map[string][]string{
		"ev-1": {HeaderTraceparent: {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		"ev-2": {HeaderTraceparent: {"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"}, HeaderTracestate: {"congo=t61rcWkgMzE"}},
		"ev-3": {},
	}
	enr := byKey(got[cfg.Topics.Enriched])
	if len(enr) != len(enriched) {
		t.Fatalf("enriched topic: %d records, want %d", len(enr), len(enriched))
	}
	for _, e := range enriched {
		r := enr[e.EventID]
		want := jsonLine(t, e)
		if r == nil || !bytes.Equal(r.Value, want) {
			t.Fatalf("enriched %s: value %s, want %s (the topic file's line)", e.EventID, r.Value, want)
		}
		if hm := headerMap(r); !sameHeaders(hm, wantHeaders[e.EventID]) {
			t.Errorf("enriched %s: headers %v, want %v", e.EventID, hm, wantHeaders[e.EventID])
		}
		if c := r.kr.Attrs.CompressionType(); c != 1 {
			t.Errorf("enriched %s: compression codec %d, want 1 (gzip)", e.EventID, c)
		}
		if !r.Timestamp.Equal(fixed.Truncate(time.Millisecond)) {
			t.Errorf("enriched %s: timestamp %v, want %v", e.EventID, r.Timestamp, fixed)
		}
	}
	idx := byKey(got[cfg.Topics.Indexed])
	for _, ix := range indexed {
		r := idx[ix.EventID]
		if r == nil || !bytes.Equal(r.Value, jsonLine(t, ix)) {
			t.Fatalf("indexed %s: value %s", ix.EventID, r.Value)
		}
		if !sameHeaders(headerMap(r), wantHeaders[ix.EventID]) {
			t.Errorf("indexed %s: headers %v, want %v (the enriched notification's)", ix.EventID, headerMap(r), wantHeaders[ix.EventID])
		}
	}
	if len(idx) != len(indexed) {
		t.Errorf("indexed topic: %d records, want %d", len(idx), len(indexed))
	}

	// Audit: one copy of each, same key and headers.
	audit := got[cfg.Topics.Audit]
	if len(audit) != len(enriched)+len(indexed) {
		t.Fatalf("audit topic: %d records, want %d", len(audit), len(enriched)+len(indexed))
	}
	seen := map[string]int{}
	for _, r := range audit {
		var a auditRecord
		if err := json.Unmarshal(r.Value, &a); err != nil {
			t.Fatalf("audit value %s: %v", r.Value, err)
		}
		if !strings.HasPrefix(string(r.Value), `{"originalTopic":`) {
			t.Errorf("audit value %s does not start with originalTopic", r.Value)
		}
		if want := fixed.Format("2006-01-02T15:04:05.000Z"); a.Timestamp != want || len(want) != len("2026-12-01T10:11:12.345Z") {
			t.Errorf("audit timestamp %q, want %q", a.Timestamp, want)
		}
		var orig *Record
		switch a.OriginalTopic {
		case cfg.Topics.Enriched:
			orig = enr[string(r.Key)]
		case cfg.Topics.Indexed:
			orig = idx[string(r.Key)]
		default:
			t.Fatalf("audit originalTopic %q", a.OriginalTopic)
		}
		if orig == nil || !bytes.Equal(a.Payload, orig.Value) {
			t.Errorf("audit of %s/%s: payload %s, want %v", a.OriginalTopic, r.Key, a.Payload, orig)
			continue
		}
		if !sameHeaders(headerMap(r), headerMap(orig)) {
			t.Errorf("audit of %s/%s: headers %v, want %v", a.OriginalTopic, r.Key, headerMap(r), headerMap(orig))
		}
		seen[a.OriginalTopic]++
	}
	if seen[cfg.Topics.Enriched] != len(enriched) || seen[cfg.Topics.Indexed] != len(indexed) {
		t.Errorf("audit copies per topic: %v", seen)
	}
}

func TestPublishWithoutAuditMirror(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	setup(t, cfg, 1, cfg.Topics.Enriched, cfg.Topics.Indexed, cfg.Topics.Audit)
	noAudit := cfg
	noAudit.Topics.Audit = ""
	p, err := NewPublisher(noAudit)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.PublishPayloads(ctx, []model.Enriched{{EventID: "e", Tags: []string{}}}, []model.Indexed{{EventID: "e"}}); err != nil {
		t.Fatal(err)
	}
	ends, err := p.Client().EndOffsets(ctx, cfg.Topics.Enriched, cfg.Topics.Indexed, cfg.Topics.Audit)
	if err != nil {
		t.Fatal(err)
	}
	if e, i, a := ends[cfg.Topics.Enriched][0], ends[cfg.Topics.Indexed][0], ends[cfg.Topics.Audit][0]; e != 1 || i != 1 || a != 0 {
		t.Errorf("end offsets enriched %d indexed %d audit %d, want 1 1 0", e, i, a)
	}
}

// jsonLine is what ingest's topic files hold for v, without the newline.
func jsonLine(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func sameHeaders(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestTraceparent(t *testing.T) {
	for _, tc := range []struct {
		tr   Trace
		want string
	}{
		{Trace{}, ""},
		{Trace{SpanID: "00f067aa0ba902b7"}, ""},
		{Trace{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"}, "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"},
		{Trace{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	} {
		if got := tc.tr.Traceparent(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.tr, got, tc.want)
		}
	}
}

// Every compression engram may be set to produces what the broker takes
// and a consumer reads back as it was sent.
func TestPublishCompressions(t *testing.T) {
	t.Parallel()
	for _, codec := range compressions {
		t.Run(codec, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.Compression = codec
			p := notifier(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			e := model.Enriched{EventID: "ev-" + codec, ObjectStorageKey: strings.Repeat("k", 500), Tags: []string{"t"}}
			if err := p.PublishPayloads(ctx, []model.Enriched{e}, []model.Indexed{{EventID: e.EventID}}); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, cfg, 1, cfg.Topics.Enriched)[cfg.Topics.Enriched]
			if len(got) != 1 || !bytes.Equal(got[0].Value, jsonLine(t, e)) {
				t.Fatalf("read back %d records, want the one sent", len(got))
			}
		})
	}
}
