package systest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"engram/backend/dirarchive"
	"engram/backend/sqliteindex"
	"engram/ingest"
	"engram/ingest/embed"
	"engram/internal/fsfloor"
	"engram/model"
)

// BenchmarkStagesVsFsync runs the ingest pipeline in this process with
// parts of it left out (stages=archive: no index write; stages=index: the
// embedded index too), each beside the raw floor as
// BenchmarkIngestBinaryVsFsync does. Where these fall short of a target,
// no change to the rest of the binary meets it (BENCHMARKS.md, "Ingest: the
// pipeline's stages against the raw floor"). Run it with -benchtime 30000x.
func BenchmarkStagesVsFsync(b *testing.B) {
	for _, stages := range []string{"archive", "index"} {
		for _, days := range []int{28, 1} {
			b.Run(fmt.Sprintf("stages=%s/days=%d", stages, days), func(b *testing.B) {
				benchStagesVsFsync(b, stages == "index", days)
			})
		}
	}
}

func benchStagesVsFsync(b *testing.B, index bool, days int) {
	rounds := benchRounds()
	dir := fsfloor.Dir(b)
	p := stagesPipeline(b, dir, index)
	per := (b.N + rounds - 1) / rounds
	v := vsFloor{workers: map[int]int{}}
	load := startLoad(b)
	b.ResetTimer()
	for r := 0; v.events < b.N; r++ {
		n := min(per, b.N-v.events)
		input, keys := daysInput(b, dir, r, n, days)
		items := feedLines(inputLines(b, input))
		runtime.GC() // the round's set-up is not the pipeline's garbage
		start, cpu0 := time.Now(), fsfloor.CPUTime()
		sum := p.Run(context.Background(), items, nil)
		el, cpu := time.Since(start), fsfloor.CPUTime()-cpu0
		if sum.Ingested != n {
			b.Fatalf("round %d: %+v", r, sum)
		}
		v.add(n, el, cpu, fsfloor.Best(b, keys, archived(b, filepath.Join(dir, "data"), keys), 8, 32, 128))
		v.busy += load.probe(time.Second)
	}
	b.StopTimer()
	v.report(b, "pipe-cores", load)
}

// stagesPipeline is a pipeline over dir/data/archive, with the embedded
// index at dir/data/index.db or none.
func stagesPipeline(b *testing.B, dir string, index bool) *ingest.Pipeline {
	arch, err := dirarchive.Open(filepath.Join(dir, "data", "archive"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { arch.Close() })
	cfg := ingest.Config{Archive: arch, Index: discardIndex{}, Embedder: embed.Stub{}}
	if index {
		ix, err := sqliteindex.Open(filepath.Join(dir, "data", "index.db"), sqliteindex.Options{DeferSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ix.Close() })
		cfg.Index = ix
	}
	p, err := ingest.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// discardIndex takes every document and keeps none, so that the archive
// stage is measured alone. Its results say created, so that the events
// count as ingested; it sets no IngestedAt, which only notifications read,
// and this pipeline publishes none.
type discardIndex struct{}

func (discardIndex) Write(_ context.Context, docs []*model.IndexDoc) []ingest.IndexResult {
	rs := make([]ingest.IndexResult, len(docs))
	for i := range rs {
		rs[i].Created = true
	}
	return rs
}

func (discardIndex) Name() string     { return "none" }
func (discardIndex) Describe() string { return "no index (benchmark)" }
func (discardIndex) Close() error     { return nil }

// inputLines reads the lines of a JSON Lines file, each its own slice.
func inputLines(b *testing.B, path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return lines
}

// feedLines is the pipeline's input of lines, every item queued.
func feedLines(lines [][]byte) <-chan ingest.Item {
	ch := make(chan ingest.Item, len(lines))
	for i, l := range lines {
		ch <- ingest.Item{Src: ingest.Source{File: "bench", Line: i + 1}, Data: l}
	}
	close(ch)
	return ch
}
