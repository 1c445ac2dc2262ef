package kafka

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"engram/model"

	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kgo"
)

// notifications is n enriched payloads as a batch's records carry them.
func notifications(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"eventId":"ev-%08d","timestamp":"2026-12-03T07:%02d:%02d.%03dZ","importanceScore":0.%04d,"embeddingDimension":1536,"objectStorageKey":"experiences/2026/12/03/agent-%d/ev-%08d.json","tags":["tool","search"]}`,
			i, i/60%60, i%60, i%1000, i*37%10000, i%7, i)
	}
	return b.Bytes()
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A small batch gets gzip's default level and a large one its fastest:
// each is byte for byte what franz-go's own compressor at that level makes.
func TestSizedGzipLevels(t *testing.T) {
	sized, err := newSizedGzip()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n     int
		level int
	}{{1, gzip.DefaultCompression}, {10, gzip.DefaultCompression}, {40, gzip.BestSpeed}, {1024, gzip.BestSpeed}} {
		src := notifications(tc.n)
		if big := len(src) >= fastGzipFrom; big != (tc.level == gzip.BestSpeed) {
			t.Fatalf("%d records are %d B: the case does not test what it says", tc.n, len(src))
		}
		ref, err := kgo.DefaultCompressor(kgo.GzipCompression().WithLevel(tc.level))
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		got, codec := sized.Compress(&a, src)
		want, _ := ref.Compress(&b, src)
		if codec != kgo.CodecGzip {
			t.Fatalf("%d records: codec %d, want gzip", tc.n, codec)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d records (%d B): not the output of level %d", tc.n, len(src), tc.level)
		}
		if !bytes.Equal(gunzip(t, got), src) {
			t.Errorf("%d records: does not decompress to what was compressed", tc.n)
		}
		if len(got) >= len(src) {
			t.Errorf("%d records: %d B compressed from %d: franz-go would send it uncompressed", tc.n, len(got), len(src))
		}
	}
}

// A batch big enough for the fastest level goes through the real broker
// compressed with gzip and reads back as it was sent.
func TestPublishLargeGzipBatch(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	p := notifier(t, cfg)
	const n = 500
	var enriched []model.Enriched
	var indexed []model.Indexed
	for i := range n {
		id := fmt.Sprintf("ev-%04d", i)
		enriched = append(enriched, model.Enriched{EventID: id, ObjectStorageKey: "experiences/2026/12/03/" + id + ".json", Tags: []string{"t"}})
		indexed = append(indexed, model.Indexed{EventID: id, Index: "experiences"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.PublishPayloads(ctx, enriched, indexed); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, cfg, n, cfg.Topics.Enriched)[cfg.Topics.Enriched]
	if len(got) != n {
		t.Fatalf("read back %d records, want %d", len(got), n)
	}
	for i, r := range got {
		if !bytes.Equal(r.Value, jsonLine(t, enriched[i])) {
			t.Fatalf("record %d: %s, want %s", i, r.Value, jsonLine(t, enriched[i]))
		}
		if c := r.kr.Attrs.CompressionType(); c != 1 {
			t.Fatalf("record %d: compression codec %d, want 1 (gzip)", i, c)
		}
	}
}

// BenchmarkGzipBatch compares gzip's default and fastest levels on a
// worker-sized batch of notifications, side by side.
func BenchmarkGzipBatch(b *testing.B) {
	src := notifications(1024)
	for _, lv := range []struct {
		name  string
		level int
	}{{"default", gzip.DefaultCompression}, {"fastest", gzip.BestSpeed}} {
		b.Run(lv.name, func(b *testing.B) {
			c, err := kgo.DefaultCompressor(kgo.GzipCompression().WithLevel(lv.level))
			if err != nil {
				b.Fatal(err)
			}
			var out int
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				var buf bytes.Buffer
				got, _ := c.Compress(&buf, src)
				out = len(got)
			}
			b.ReportMetric(float64(out)/float64(len(src)), "ratio")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024/1e3, "µs/record")
		})
	}
}
