package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/ingest/archivetest"
	"engram/model"
)

// memArchive is an archive held in memory, listed in key order.
type memArchive map[string]*ingest.Object

func (a memArchive) put(key string, body []byte, modified time.Time) {
	a[key] = &ingest.Object{Key: key, Body: body, Size: int64(len(body)), LastModified: modified}
}

func (a memArchive) Get(_ context.Context, key string, _ int64) (*ingest.Object, error) {
	if o, ok := a[key]; ok {
		return o, nil
	}
	return nil, backend.ErrNotFound
}

func (a memArchive) List(_ context.Context, prefix string, fn func(string, int64) error) error {
	keys := make([]string, 0, len(a))
	for k := range a {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn(k, a[k].Size); err != nil {
			return err
		}
	}
	return nil
}

// memIndex is an index held in memory, scanned in key order.
type memIndex []*model.IndexDoc

func (ix memIndex) ScanByKey(_ context.Context, from, to string, fn func(*model.IndexDoc) error) error {
	docs := append(memIndex(nil), ix...)
	sort.Slice(docs, func(i, j int) bool { return docs[i].ObjectStorageKey < docs[j].ObjectStorageKey })
	for _, d := range docs {
		if d.ObjectStorageKey >= from && (to == "" || d.ObjectStorageKey < to) {
			if err := fn(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexed is the document ingest makes of an archived body.
func indexed(t *testing.T, body []byte) *model.IndexDoc {
	t.Helper()
	ev, err := model.DecodeArchived(body)
	if err != nil {
		t.Fatal(err)
	}
	return model.NewIndexDoc(ev, 0)
}

const ts = "2026-05-08T22:31:25Z"

var longAgo = time.Date(2026, 5, 8, 23, 0, 0, 0, time.UTC)

// An unknown member whose name differs from eventId only in case is kept
// in the archive and ignored by ingest and reindex; verify must read it
// the same way, not as the event's id.
func TestVerifyMatchesMemberNamesExactly(t *testing.T) {
	key, body := archivetest.Event("e-1", ts, "hello", []float64{0.5}, 0.25)
	body = []byte(strings.Replace(string(body), `{"eventId":"e-1"`, `{"eventId":"e-1","EventID":"other"`, 1))
	doc := indexed(t, body)
	if doc.EventID != "e-1" {
		t.Fatalf("ingest reads eventId %q", doc.EventID)
	}
	ar := memArchive{}
	ar.put(key, body, longAgo)
	rep, err := Run(context.Background(), ar, memIndex{doc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Agreeing != 1 {
		t.Fatalf("verify disagrees with ingest: %+v", rep)
	}
}

// A member given twice is rejected by ingest; verify reports such an
// object as bad rather than taking the last one.
func TestVerifyRejectsDuplicateMembers(t *testing.T) {
	key, body := archivetest.Event("e-1", ts, "hello", []float64{0.5}, 0.25)
	doc := indexed(t, body)
	body = []byte(strings.Replace(string(body), `{"eventId":"e-1"`, `{"eventId":"e-2","eventId":"e-1"`, 1))
	ar := memArchive{}
	ar.put(key, body, longAgo)
	rep, err := Run(context.Background(), ar, memIndex{doc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[badObject] != 1 || !strings.Contains(rep.First[0].Detail, "more than once") {
		t.Fatalf("want one bad object (eventId given more than once), got %+v", rep)
	}
}

// liveIndex is memIndex with a lookup: docs indexed after the scan passed
// their key are found by Get only.
type liveIndex struct {
	memIndex
	late map[string]*model.IndexDoc
}

func (ix liveIndex) Get(_ context.Context, id string) (*model.IndexDoc, error) {
	if d, ok := ix.late[id]; ok {
		return d, nil
	}
	for _, d := range ix.memIndex {
		if d.EventID == id {
			return d, nil
		}
	}
	return nil, backend.ErrNotFound
}

// During a live ingest, events archived after the run began, events the
// pending journal holds, and events indexed after the scan passed them are
// in flight, not disagreements; an old unindexed event still is one.
func TestVerifySkipsInFlightEvents(t *testing.T) {
	ar := memArchive{}
	var docs memIndex
	add := func(id string, modified time.Time, index bool) (string, *model.IndexDoc) {
		key, body := archivetest.Event(id, ts, "hello", []float64{0.5}, 0.25)
		ar.put(key, body, modified)
		doc := indexed(t, body)
		if index {
			docs = append(docs, doc)
		}
		return key, doc
	}
	add("ok", longAgo, true)
	add("new", time.Now().Add(time.Hour), false) // archived after the start
	pending, _ := add("pending", longAgo, false) // in the journal
	_, late := add("late", longAgo, false)       // indexed behind the scan
	add("lost", longAgo, false)                  // a real disagreement
	ix := liveIndex{docs, map[string]*model.IndexDoc{"late": late}}
	rep, err := Run(context.Background(), ar, ix, Options{Pending: map[string]bool{pending: true}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.InFlight != 3 || rep.Counts[missingIndex] != 1 || rep.First[0].EventID != "lost" {
		t.Fatalf("want 3 in flight and lost missing from the index, got %+v", rep)
	}
}

// An index document whose archive object appears after the listing passed
// its key was archived during the run: in flight.
func TestVerifyInFlightDocumentWithoutListedObject(t *testing.T) {
	key, body := archivetest.Event("e-1", ts, "hello", []float64{0.5}, 0.25)
	doc := indexed(t, body)
	ar := memArchive{}
	lister := listedBefore{ar, key, body}
	rep, err := Run(context.Background(), lister, memIndex{doc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.InFlight != 1 {
		t.Fatalf("want one event in flight and no differences, got %+v", rep)
	}
}

// listedBefore lists an empty archive and then has the object archived.
type listedBefore struct {
	memArchive
	key  string
	body []byte
}

func (l listedBefore) List(ctx context.Context, prefix string, fn func(string, int64) error) error {
	err := l.memArchive.List(ctx, prefix, fn)
	l.put(l.key, l.body, time.Now())
	return err
}

// topic is a notification topic holding the given events.
func topic(name string, docs ...*model.IndexDoc) TopicSource {
	return TopicSource{Name: name, Scan: func(_ context.Context, fn func(Notice) error) error {
		for i, d := range docs {
			if err := fn(Notice{EventID: d.EventID, Key: d.ObjectStorageKey, Where: fmt.Sprintf("%s:%d", name, i+1)}); err != nil {
				return err
			}
		}
		return nil
	}}
}

// The notifications are a layer of their own: an index that agrees with
// the archive still does when the topics lack its events, and the report
// says which layer lacks what.
func TestVerifyCountsLayersApart(t *testing.T) {
	ar := memArchive{}
	var docs memIndex
	for _, id := range []string{"e-1", "e-2", "e-3"} {
		key, body := archivetest.Event(id, ts, "hello", []float64{0.5}, 0.25)
		ar.put(key, body, longAgo)
		docs = append(docs, indexed(t, body))
	}
	for _, c := range []struct {
		name                          string
		topics                        []TopicSource
		announced, unannounced, diffs int64
		messages                      int64
	}{
		{"empty topics", []TopicSource{topic("a"), topic("b")}, 0, 3, 6, 0},
		{"one topic short", []TopicSource{topic("a", docs...), topic("b", docs[0])}, 1, 2, 2, 4},
		{"all announced", []TopicSource{topic("a", docs...), topic("b", docs...)}, 3, 0, 0, 6},
	} {
		rep, err := Run(context.Background(), ar, docs, Options{Topics: c.topics})
		if err != nil {
			t.Fatal(err)
		}
		n := rep.Notifications
		if rep.Agreeing != 3 || !rep.IndexOK() || n == nil || n.Indexed != 3 || n.Announced != c.announced ||
			n.Unannounced != c.unannounced || n.Messages != c.messages || rep.Counts[unannounced] != c.diffs {
			t.Errorf("%s: %+v, notifications %+v", c.name, rep, n)
			continue
		}
		if rep.NotificationsOK() != (c.unannounced == 0) || rep.OnlyUnannounced() != (c.unannounced > 0) || rep.OK() != (c.unannounced == 0) {
			t.Errorf("%s: OK %v, NotificationsOK %v, OnlyUnannounced %v", c.name, rep.OK(), rep.NotificationsOK(), rep.OnlyUnannounced())
		}
		if strings.Join(n.Topics, ",") != "a,b" {
			t.Errorf("%s: topics %q", c.name, n.Topics)
		}
	}
	// Not checked: no count, and nothing about notifications is wrong.
	rep, err := Run(context.Background(), ar, docs, Options{})
	if err != nil || rep.Notifications != nil || !rep.OK() || rep.Agreeing != 3 {
		t.Fatalf("without topics: %+v, %v", rep, err)
	}
	// A disagreement of the index is not the notifications'.
	rep, err = Run(context.Background(), ar, docs[:2], Options{Topics: []TopicSource{topic("a", docs[:2]...)}})
	if err != nil || rep.IndexOK() || !rep.NotificationsOK() || rep.OnlyUnannounced() || rep.Agreeing != 2 {
		t.Fatalf("missing document: %+v, %v", rep, err)
	}
}
