package ingest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"engram/ingest"
)

// slowPublisher takes a while over each call and counts the calls under
// way at once; as a Pipeliner it asks for up to inFlight of them.
type slowPublisher struct {
	recorder
	delay     time.Duration
	mu        sync.Mutex
	now, most int
	calls     int
}

func (p *slowPublisher) Publish(ctx context.Context, as []ingest.Announcement) error {
	p.mu.Lock()
	p.now++
	p.calls++
	p.most = max(p.most, p.now)
	p.mu.Unlock()
	time.Sleep(p.delay)
	p.mu.Lock()
	p.now--
	p.mu.Unlock()
	return p.recorder.Publish(ctx, as)
}

type pipeliner struct {
	*slowPublisher
	n int
}

func (p pipeliner) InFlight() int { return p.n }

// A Pipeliner gets up to InFlight publish calls at once, every event is
// announced once and reported only after its own publish ended; a plain
// Publisher gets one call at a time.
func TestPublishInFlight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inFlight int // 0: not a Pipeliner
	}{{"plain", 0}, {"pipeliner-3", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStores(t)
			slow := &slowPublisher{delay: 100 * time.Millisecond}
			var pub ingest.Publisher = slow
			if tc.inFlight > 0 {
				pub = pipeliner{slow, tc.inFlight}
			}
			cfg := s.config()
			cfg.Publisher, cfg.BatchSize, cfg.BatchWait = pub, 8, time.Millisecond
			p, err := ingest.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			inputs := generate(400, "inflight-"+tc.name+"-")
			var early []string
			sum := p.Run(context.Background(), feed(inputs...), func(tr *ingest.Trace) {
				if tr.Stages[ingest.StagePublish].Status != ingest.StatusDone {
					early = append(early, tr.EventID)
				}
			})
			if sum.Ingested != len(inputs) {
				t.Fatalf("ingested %d of %d: %+v", sum.Ingested, len(inputs), sum)
			}
			if len(early) > 0 {
				t.Errorf("%d events reported before their publish ended, e.g. %s", len(early), early[0])
			}
			ids := slow.ids()
			for id, n := range ids {
				if n != 1 {
					t.Errorf("%s announced %d times", id, n)
				}
			}
			if len(ids) != len(inputs) {
				t.Errorf("%d events announced, want %d", len(ids), len(inputs))
			}
			want := max(1, tc.inFlight)
			if slow.most != want {
				t.Errorf("at most %d publish calls at once (of %d calls), want %d", slow.most, slow.calls, want)
			}
		})
	}
}
