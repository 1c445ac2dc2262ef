package verify

import (
	"context"
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
	if rep.Counts[BadObject] != 1 || !strings.Contains(rep.First[0].Detail, "more than once") {
		t.Fatalf("want one bad object (eventId given more than once), got %+v", rep)
	}
}
