package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"engram/ingest"
	"engram/ingest/gen"
	"engram/model"
)

// prepared is what a pipeline run would write: archive bodies and index
// documents, built once so the raw baselines send exactly the same bytes.
type prepared struct {
	items  [][]byte
	keys   []string
	bodies [][]byte
	docs   []*model.IndexDoc
}

func prepare(b *testing.B, n int) *prepared {
	g := gen.Events(gen.Config{Seed: 11, Prefix: fmt.Sprintf("bench%d-", time.Now().UnixNano())}, n)
	p := &prepared{items: g}
	for _, raw := range g {
		ev, err := model.Decode(raw, model.DecodeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ev.Input.Embedding = model.StubEmbedding(ev.Input.Text, model.StubDimension)
		ev.ImportanceScore = model.Importance(ev)
		ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
		body, _ := ev.ArchiveJSON()
		p.keys, p.bodies = append(p.keys, ev.ObjectStorageKey), append(p.bodies, body)
		p.docs = append(p.docs, model.NewIndexDoc(ev, 0))
	}
	return p
}

// BenchmarkIngestS3OpenSearch measures, in one run and on the same servers,
// the pipeline into versitygw + OpenSearch and the two raw capacities it is
// bounded by: minio-go PUTs of the same objects at the same concurrency, and
// _bulk of the same documents. It reports the ratio of the pipeline to the
// slower raw rate. Run with -benchtime=Nx (N events).
func BenchmarkIngestS3OpenSearch(b *testing.B) {
	args := benchServiceArgs(b)
	p := prepare(b, b.N)
	workers := 8
	putRate := rawPutRate(b, args, p, workers)
	bulkRate := rawBulkRate(b, p)
	rate := pipelineRate(b, args, p, workers)
	slower := min(putRate, bulkRate)
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(putRate, "rawput/s")
	b.ReportMetric(bulkRate, "rawbulk/s")
	b.ReportMetric(rate/slower, "ratio")
}

func benchServiceArgs(b *testing.B) map[string]string {
	s3, osURL := os.Getenv("ENGRAM_TEST_S3_ENDPOINT"), os.Getenv("ENGRAM_TEST_OPENSEARCH_URL")
	if s3 == "" || osURL == "" {
		b.Skip("set ENGRAM_TEST_S3_ENDPOINT and ENGRAM_TEST_OPENSEARCH_URL (source .ci/services/.env)")
	}
	return map[string]string{"s3": s3, "os": osURL, "ak": os.Getenv("ENGRAM_TEST_S3_ACCESS_KEY"), "sk": os.Getenv("ENGRAM_TEST_S3_SECRET_KEY")}
}

func rawPutRate(b *testing.B, a map[string]string, p *prepared, workers int) float64 {
	ctx := context.Background()
	mc, err := minio.New(a["s3"], &minio.Options{Creds: credentials.NewStaticV4(a["ak"], a["sk"], "")})
	if err != nil {
		b.Fatal(err)
	}
	bucket := fmt.Sprintf("engram-bench-raw-%d", time.Now().UnixNano())
	if err := mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	parallel(len(p.bodies), workers, func(i int) {
		opts := minio.PutObjectOptions{ContentType: "application/json", SendContentMd5: true}
		opts.SetMatchETagExcept("*")
		if _, err := mc.PutObject(ctx, bucket, p.keys[i], bytes.NewReader(p.bodies[i]), int64(len(p.bodies[i])), opts); err != nil {
			b.Error(err)
		}
	})
	return float64(len(p.bodies)) / time.Since(start).Seconds()
}

func rawBulkRate(b *testing.B, p *prepared) float64 {
	osURL := os.Getenv("ENGRAM_TEST_OPENSEARCH_URL")
	index := fmt.Sprintf("engram-bench-raw-%d", time.Now().UnixNano())
	defer httpDo(http.MethodDelete, osURL+"/"+index, nil)
	mapping := `{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0}},"mappings":{"properties":{"embedding":{"type":"knn_vector","dimension":8,"method":{"name":"hnsw","engine":"lucene","space_type":"l2"}},"summary":{"type":"text","analyzer":"english"}}}}`
	httpDo(http.MethodPut, osURL+"/"+index, []byte(mapping))
	start := time.Now()
	for i := 0; i < len(p.docs); i += 500 {
		var body bytes.Buffer
		for _, d := range p.docs[i:min(i+500, len(p.docs))] {
			fmt.Fprintf(&body, `{"create":{"_index":%q,"_id":%q}}`+"\n", index, d.EventID)
			line, _ := json.Marshal(d)
			body.Write(line)
			body.WriteByte('\n')
		}
		if status := httpDo(http.MethodPost, osURL+"/_bulk", body.Bytes()); status != 200 {
			b.Fatalf("_bulk: status %d", status)
		}
	}
	return float64(len(p.docs)) / time.Since(start).Seconds()
}

func pipelineRate(b *testing.B, a map[string]string, p *prepared, workers int) float64 {
	name := fmt.Sprintf("engram-bench-%d", time.Now().UnixNano())
	conf := benchConf(b, a, name, "false", b.TempDir())
	e := &env{stdout: os.Stdout, stderr: os.Stderr, getenv: func(string) string { return "" }}
	st, err := openBackends(context.Background(), conf, e)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	defer httpDo(http.MethodDelete, a["os"]+"/"+name, nil)
	pl, _ := ingest.New(ingest.Config{Archive: st.archive, Index: st.index, Publisher: st.publisher, Embedder: st.embedder, Workers: workers, BatchSize: 500})
	items := make(chan ingest.Item, len(p.items))
	for i, raw := range p.items {
		items <- ingest.Item{Src: ingest.Source{File: "bench", Line: i + 1}, Data: raw}
	}
	close(items)
	start := time.Now()
	sum := pl.Run(context.Background(), items, nil)
	if sum.Ingested != len(p.items) {
		b.Fatalf("pipeline summary %+v", sum)
	}
	return float64(len(p.items)) / time.Since(start).Seconds()
}

// BenchmarkSingleEventLatency ingests events one at a time into versitygw +
// OpenSearch and reports p50/p99 of receive → indexed (and published), with
// refresh off, refresh=true (the source system's refresh on every write) and
// refresh=wait_for (which waits for the next periodic refresh, about 1 s:
// use a small -benchtime).
func BenchmarkSingleEventLatency(b *testing.B) {
	a := benchServiceArgs(b)
	for _, refresh := range []string{"false", "true", "wait_for"} {
		b.Run("refresh="+refresh, func(b *testing.B) {
			name := fmt.Sprintf("engram-bench-lat-%d", time.Now().UnixNano())
			conf := benchConf(b, a, name, refresh, b.TempDir())
			e := &env{stdout: os.Stdout, stderr: os.Stderr, getenv: func(string) string { return "" }}
			st, err := openBackends(context.Background(), conf, e)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			defer httpDo(http.MethodDelete, a["os"]+"/"+name, nil)
			pl, _ := ingest.New(ingest.Config{Archive: st.archive, Index: st.index, Embedder: st.embedder, BatchWait: time.Millisecond})
			events := gen.Events(gen.Config{Seed: 11, Prefix: name + "-"}, b.N)
			var lat []time.Duration
			b.ResetTimer()
			for _, raw := range events {
				items := make(chan ingest.Item, 1)
				items <- ingest.Item{Data: raw}
				close(items)
				pl.Run(context.Background(), items, func(t *ingest.Trace) { lat = append(lat, t.Total) })
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

func parallel(n, workers int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func httpDo(method, url string, body []byte) int {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// benchConf points engram at the test services with a fresh bucket and
// index called name.
func benchConf(tb testing.TB, a map[string]string, name, refresh, data string) *resolved {
	conf, err := resolvedFrom(map[string]string{
		"archive": "s3", "s3.endpoint": "http://" + a["s3"], "s3.bucket": name, "s3.create_bucket": "true",
		"s3.access_key": a["ak"], "s3.secret_key": a["sk"], "s3.path_style": "true", "s3.region": "us-east-1",
		"index": "opensearch", "opensearch.url": a["os"], "opensearch.index": name, "opensearch.refresh": refresh,
		"opensearch.knn_engine": "lucene", "opensearch.timeout": "5m", "data": data,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return conf
}
