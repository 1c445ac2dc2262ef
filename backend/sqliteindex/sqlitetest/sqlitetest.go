package sqlitetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"engram/backend/sqliteindex"
	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// benchVersion is the version of the corpus in the marker's name (as in
// sqliteindex's read_bench_test.go: change both with the generator).
const benchVersion = "1"

// BenchIndex is the path of the benchmark index of
// querytest.BenchCorpusDocs documents ($ENGRAM_QUERY_BENCH_DB when set),
// built into the temporary directory when missing.
func BenchIndex(tb testing.TB) string {
	if p := os.Getenv("ENGRAM_QUERY_BENCH_DB"); p != "" {
		return p
	}
	path := filepath.Join(os.TempDir(), "engram-bench-1m.db")
	marker := path + ".v" + benchVersion
	if _, err := os.Stat(marker); err == nil && Count(path) == querytest.BenchCorpusDocs {
		return path
	}
	tb.Logf("building %s (%d documents, once)", path, querytest.BenchCorpusDocs)
	start := time.Now()
	tmp := path + ".building"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", path, path + "-wal", path + "-shm", marker} {
		_ = os.Remove(p)
	}
	db, err := sqliteindex.Open(tmp, sqliteindex.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	err = querytest.BenchCorpus(querytest.BenchCorpusDocs, func(docs []*model.IndexDoc) error {
		for _, r := range db.Write(context.Background(), docs) {
			if r.Err != nil {
				return r.Err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = os.WriteFile(marker, nil, 0o644)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("built in %s", time.Since(start).Round(time.Second))
	return path
}

// Count is how many documents the index at path holds, -1 when it cannot
// be read.
func Count(path string) int64 {
	r, err := sqliteindex.OpenReader(path, query.Options{})
	if err != nil {
		return -1
	}
	defer r.Close()
	n, err := r.Count(context.Background())
	if err != nil {
		return -1
	}
	return n
}
