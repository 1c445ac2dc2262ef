package querytest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"engram/model"
	"engram/query"
)

// CheckRebuilt checks a reader over an index rebuilt from the archive of
// docs (engram reindex) against the reference semantics over docs. A rebuild
// writes in archive-key order, so listings are compared as sets, and gives a
// system: session's event the source system, so docs are compared so. docs
// must have been generated (Generate) at most 20 s before.
func CheckRebuilt(t *testing.T, r query.Reader, docs []*model.IndexDoc) {
	rebuilt := make([]*model.IndexDoc, len(docs))
	for i, d := range docs {
		c := *d
		c.Source = model.SourceOf(d.Source, d.SessionID)
		rebuilt[i] = &c
	}
	docs = rebuilt
	s := &suite{docs: docs, all: r, ctx: context.Background()}
	t.Run("Count", s.testCount)
	t.Run("Document", s.testDocument)
	t.Run("Turn", s.testTurn)
	t.Run("Filters", func(t *testing.T) {
		selective := 0
		for _, src := range s.searchExprs() {
			e := mustParse(t, src)
			now := time.Now()
			got := pages(t, fmt.Sprintf("Search(%q)", src), 97, func(after query.Cursor, limit int) (query.Page, error) {
				return r.Search(s.ctx, src, after, limit)
			})
			want := ids(filter(docs, e, now))
			if len(want) > 0 && len(want) < len(docs) {
				selective++
			}
			if d := diff(sorted(got), sorted(want)); d != "" {
				t.Errorf("Search(%q), as sets: %s", src, d)
			}
		}
		if selective < len(s.searchExprs())/2 {
			t.Errorf("only %d expressions select some but not all documents", selective)
		}
	})
}
