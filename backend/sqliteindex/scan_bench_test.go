package sqliteindex

import (
	"context"
	"os"
	"testing"
	"time"

	"engram/model"
	"engram/query/querytest"
)

// BenchmarkScanByKey walks the million-document corpus in key order, as
// verify does: walk=day is this schema's walk (a day at a time through
// docs_ts, sorted); walk=key is the same rows in an index of schema 6,
// walked by its docs_key (a copy made once beside the corpus). all is the
// whole index, day one day's documents (verify --since D --until D).
func BenchmarkScanByKey(b *testing.B) {
	path := benchDB(b)
	v6 := path + ".schema6"
	if _, err := os.Stat(v6 + ".done"); err != nil {
		b.Logf("copying %s as schema 6 (once)", path)
		copyFile(b, path, v6)
		db, err := Open(v6, Options{})
		if err != nil {
			b.Fatal(err)
		}
		asVersion6(b, db)
		if err := os.WriteFile(v6+".done", nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	day := model.ArchivePrefix(querytest.BenchCorpusStart.Add(72 * time.Hour))
	next := model.ArchivePrefix(querytest.BenchCorpusStart.Add(96 * time.Hour))
	for _, walk := range []struct{ name, path string }{{"day", path}, {"key", v6}} {
		db, err := OpenReadOnly(walk.path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range []struct{ name, from, to string }{{"all", "events/", ""}, {"day", day, next}} {
			b.Run("walk="+walk.name+"/"+r.name, func(b *testing.B) {
				var n int
				for range b.N {
					n = 0
					err := db.ScanByKey(context.Background(), r.from, r.to, func(*model.IndexDoc) error {
						n++
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n), "docs")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*max(n, 1)), "ns/doc")
			})
		}
		db.Close()
	}
}
