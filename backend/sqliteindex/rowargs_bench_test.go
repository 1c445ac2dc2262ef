package sqliteindex

import "testing"

// BenchmarkRowArgs is the encode stage's per-document work: checking a
// document and building its insert's arguments (the structured column, the
// tags, the embedding blobs; no JSON of the document, which its columns
// hold).
func BenchmarkRowArgs(b *testing.B) {
	d := testDoc("e1")
	d.Embedding = benchEmbedding(8)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rowArgs(d, "2026-05-08T22:31:25.000Z"); err != nil {
			b.Fatal(err)
		}
	}
}
