package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/backend/dirarchive"
	"engram/backend/sqliteindex"
	"engram/ingest"
	"engram/ingest/embed"
	"engram/ingest/gen"
	"engram/query"
	"engram/ui/uikit"
)

// BenchmarkDetailOpenInProcess is Enter on a stream row until the archived
// event is drawn: the key's Update, the commands it starts (the archive
// fetch from a real directory store, run as the program runs them: each in
// its own goroutine), the Update of their answers and View after each
// Update. The data set is ingested through the real pipeline into a
// directory archive and a SQLite index, read back by the SQLite reader.
// Between presses (outside the clock) Esc returns to the stream and the
// selection moves one row down.
//
//	go test ./ui -run '^$' -bench DetailOpenInProcess
func BenchmarkDetailOpenInProcess(b *testing.B) {
	const n = 2000
	dir := b.TempDir()
	archive, err := dirarchive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		b.Fatal(err)
	}
	ix, err := sqliteindex.Open(filepath.Join(dir, "index.db"), sqliteindex.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := ingest.New(ingest.Config{Archive: archive, Index: ix, Embedder: embed.Stub{}})
	if err != nil {
		b.Fatal(err)
	}
	items := make(chan ingest.Item, n)
	g := gen.New(gen.Config{Seed: 3, Prefix: "bd-"})
	for i := range n {
		items <- ingest.Item{Src: ingest.Source{File: "bench", Line: i + 1}, Data: g.Next()}
	}
	close(items)
	if sum := p.Run(context.Background(), items, nil); sum.Ingested != n {
		b.Fatalf("ingest: %+v", sum)
	}
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	r, err := sqliteindex.OpenReader(filepath.Join(dir, "index.db"), query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()

	o := testOpts(b)
	o.PageSize, o.BufferRows = 200, 10000
	deps := uikit.Deps{Reader: r, Archive: archive, Backend: "sqlite + dir", Profile: "bench", Now: time.Now}
	m := newTestModel(b, deps, o, 160, 48)
	if m.count != n {
		b.Fatalf("the stream counts %d documents, want %d", m.count, n)
	}

	ds := make([]time.Duration, 0, b.N)
	var fetches []time.Duration // the archive command alone (read, check, parse)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		_, cmd := m.Update(keyMsg("enter"))
		_ = m.View()
		queue := []tea.Cmd{cmd}
		for len(queue) > 0 && !(m.focus == viewDetail && !m.detail.Busy() && m.detail.Archived() != nil) {
			c := queue[0]
			queue = queue[1:]
			t0 := time.Now()
			msg, ok := runCmd(c, 5*time.Second)
			if fmtType(msg) == "detail.archiveMsg" { // the detail's own answer
				fetches = append(fetches, time.Since(t0))
			}
			if !ok || msg == nil {
				continue
			}
			if batch, isBatch := msg.(tea.BatchMsg); isBatch {
				queue = append(queue, batch...)
				continue
			}
			_, next := m.Update(msg)
			_ = m.View()
			queue = append(queue, next)
		}
		ds = append(ds, time.Since(start))

		b.StopTimer()
		s := screen(m)
		if m.focus != viewDetail || !strings.Contains(s, "✓ archive events/") || !strings.Contains(s, `"archive": {`) {
			b.Fatalf("press %d: the archived event is not on screen:\n%s", i, s)
		}
		press(b, m, "esc")
		if (i+1)%(n-1) == 0 {
			press(b, m, "home")
		} else {
			press(b, m, "down")
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(ds)
	slices.Sort(fetches)
	ms := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))]) / 1e6 }
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(float64(fetches[len(fetches)/2])/1e6, "fetch-p50-ms")
	if b.N >= 100 {
		b.Logf("%d opens: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %s", b.N, ms(0.5), ms(0.9), ms(0.99), fmt.Sprint(ds[len(ds)-1]))
	}
}
