package sqliteindex

import (
	"testing"

	"engram/query"
	"engram/query/recall/recalltest"
)

// TestRecall runs the known answers of recall on the embedded index.
func TestRecall(t *testing.T) {
	db, path := openIndex(t)
	write(t, db, recalltest.Docs())
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recalltest.Run(t, r)
}
