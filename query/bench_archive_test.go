package query_test

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"engram/backend/dirarchive"
	"engram/backend/s3archive"
	"engram/ingest"
	"engram/ingest/gen"
	"engram/model"
	"engram/query"
)

// archivedEvent is one generated event as the pipeline archives it, with
// its index document.
type archivedEvent struct {
	key  string
	body []byte
	doc  *model.IndexDoc
}

func archivedEvents(tb testing.TB, n int, prefix string) []archivedEvent {
	g := gen.New(gen.Config{Seed: 21, Prefix: prefix})
	opts := model.DecodeOptions{Now: time.Now, NewID: func() string { return "" }}
	out := make([]archivedEvent, n)
	for i := range out {
		ev, err := model.Decode(g.Next(), opts)
		if err != nil {
			tb.Fatal(err)
		}
		key, err := model.ArchiveKey(ev.EventID, ev.Timestamp)
		if err != nil {
			tb.Fatal(err)
		}
		ev.Enrich(model.StubEmbedding(ev.Input.Text, model.StubDimension), ev.ImportanceScore, key)
		body, err := ev.ArchiveJSON()
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = archivedEvent{key, body, model.NewIndexDoc(ev, 0)}
	}
	return out
}

// putAll archives the events with 8 writers.
func putAll(tb testing.TB, a ingest.Archive, evs []archivedEvent) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(evs); i += 8 {
				if _, err := a.Put(context.Background(), evs[i].key, evs[i].body); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// fetchLoop fetches the archived event of a random document per op (the
// default 4 MiB limit of the inspector) and reports p50/p99 in ms.
func fetchLoop(b *testing.B, ar ingest.ArchiveReader, evs []archivedEvent) {
	rng := rand.New(rand.NewPCG(9, 9))
	ctx := context.Background()
	var ds []time.Duration
	for b.Loop() {
		e := evs[rng.IntN(len(evs))]
		start := time.Now()
		a, err := query.FetchArchive(ctx, ar, e.doc, 4<<20)
		ds = append(ds, time.Since(start))
		if err != nil || a.Truncated || len(a.Body) != len(e.body) {
			b.Fatalf("fetch %s: %v", e.key, err)
		}
	}
	slices.Sort(ds)
	ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	b.Logf("%d fetches: mean %v, p99.9 %.3f ms, max %v", len(ds), sum/time.Duration(len(ds)), ms(0.999), ds[len(ds)-1])
}

// BenchmarkArchiveFetch is query.FetchArchive of one random event among
// 10,000 archived ones: from the directory store (a warm page cache) and,
// when ENGRAM_TEST_S3_ENDPOINT is set (source .ci/services/.env), from the
// S3 test server in a fresh bucket.
//
//	go test ./query -run '^$' -bench ArchiveFetch
func BenchmarkArchiveFetch(b *testing.B) {
	const n = 10000
	evs := archivedEvents(b, n, "af-")

	b.Run("dir", func(b *testing.B) {
		a, err := dirarchive.Open(filepath.Join(b.TempDir(), "archive"))
		if err != nil {
			b.Fatal(err)
		}
		putAll(b, a, evs)
		if err := a.Sync(context.Background()); err != nil {
			b.Fatal(err)
		}
		fetchLoop(b, a, evs)
	})

	b.Run("s3", func(b *testing.B) {
		ep := os.Getenv("ENGRAM_TEST_S3_ENDPOINT")
		if ep == "" {
			b.Skip("ENGRAM_TEST_S3_ENDPOINT not set (source .ci/services/.env): skipping the S3 fetch")
		}
		suffix := make([]byte, 6)
		crand.Read(suffix)
		cfg := s3archive.Config{
			Endpoint: ep, Bucket: "engram-bench-" + hex.EncodeToString(suffix),
			Region:    os.Getenv("ENGRAM_TEST_S3_REGION"),
			AccessKey: os.Getenv("ENGRAM_TEST_S3_ACCESS_KEY"), SecretKey: os.Getenv("ENGRAM_TEST_S3_SECRET_KEY"),
			PathStyle: true, Timeout: 20 * time.Second, Logf: b.Logf,
		}
		a, err := s3archive.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { removeBucket(b, cfg) })
		if err := a.EnsureBucket(context.Background()); err != nil {
			b.Fatal(err)
		}
		putAll(b, a, evs)
		fetchLoop(b, a, evs)
	})
}

// removeBucket deletes the benchmark's bucket and everything in it.
func removeBucket(b *testing.B, cfg s3archive.Config) {
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Region: cfg.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		b.Errorf("cleanup: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	objs := c.ListObjects(ctx, cfg.Bucket, minio.ListObjectsOptions{Recursive: true})
	for e := range c.RemoveObjects(ctx, cfg.Bucket, objs, minio.RemoveObjectsOptions{}) {
		b.Errorf("cleanup: remove %s: %v", e.ObjectName, e.Err)
	}
	if err := c.RemoveBucket(ctx, cfg.Bucket); err != nil && minio.ToErrorResponse(err).Code != "NoSuchBucket" {
		b.Errorf("cleanup: remove bucket %s: %v", cfg.Bucket, err)
	}
}
