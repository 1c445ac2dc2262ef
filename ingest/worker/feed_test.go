package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"engram/backend/kafka"
	"engram/ingest"
)

// polls is a Consumer whose polls return a script of results, then block.
type polls struct {
	mu     sync.Mutex
	script []func() ([]*kafka.Record, error)
}

func (p *polls) Poll(ctx context.Context) ([]*kafka.Record, error) {
	p.mu.Lock()
	if len(p.script) > 0 {
		f := p.script[0]
		p.script = p.script[1:]
		p.mu.Unlock()
		return f()
	}
	p.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}
func (p *polls) Done(...*kafka.Record)                                 {}
func (p *polls) Owns(*kafka.Record) bool                               { return true }
func (p *polls) Reject(context.Context, *kafka.Record, []string) error { return nil }
func (p *polls) Commit(context.Context) error                          { return nil }
func fail(err error) func() ([]*kafka.Record, error) {
	return func() ([]*kafka.Record, error) { return nil, err }
}
func records(rs ...*kafka.Record) func() ([]*kafka.Record, error) {
	return func() ([]*kafka.Record, error) { return rs, nil }
}
func unreachable() error { return &kafka.Error{Broker: "b:9092", Err: syscall.ECONNREFUSED} }

// Through a broker outage the worker keeps polling, says so once and says
// when it is back; the records after it reach the pipeline.
func TestFeedWaitsOutOutage(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	var outages []string
	c := &polls{}
	for range 3 {
		c.script = append(c.script, fail(fmt.Errorf("kafka: poll: %w", &kafka.Error{Broker: "b:9092", Err: errors.New("unable to join group session")})))
	}
	c.script = append(c.script, records(), records(&kafka.Record{Topic: "raw", Value: []byte("{}")}))
	rechecked := 0
	w := &worker{cfg: Config{Consumer: c, Waiting: "the broker",
		Logf:    func(f string, a ...any) { mu.Lock(); lines = append(lines, fmt.Sprintf(f, a...)); mu.Unlock() },
		Outage:  func(err error) { outages = append(outages, fmt.Sprint(err)) },
		Recheck: func(context.Context) error { rechecked++; return nil },
	}}
	items := make(chan ingest.Item, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- w.feed(ctx, items) }()
	select {
	case it := <-items:
		if string(it.Data) != "{}" {
			t.Errorf("item %q", it.Data)
		}
	case err := <-errc:
		t.Fatalf("feed returned %v through a transient outage", err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("feed after ctx: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 2 || !strings.Contains(lines[0], "waiting for the broker") || !strings.Contains(lines[1], "back after") {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
	if rechecked != 1 || len(outages) != 4 || outages[3] != "<nil>" {
		t.Errorf("rechecked %d times, outages %q", rechecked, outages)
	}
}

// A failure retrying cannot fix stops the worker, as does a broker back
// without the topic.
func TestFeedStopsOnFatal(t *testing.T) {
	for name, c := range map[string]*polls{
		"sasl":    {script: []func() ([]*kafka.Record, error){fail(fmt.Errorf("kafka: poll: %w", kerr.SaslAuthenticationFailed))}},
		"acl":     {script: []func() ([]*kafka.Record, error){fail(kerr.GroupAuthorizationFailed)}},
		"closed":  {script: []func() ([]*kafka.Record, error){fail(kafka.ErrClosed)}},
		"recheck": {script: []func() ([]*kafka.Record, error){fail(unreachable()), records()}},
	} {
		t.Run(name, func(t *testing.T) {
			w := &worker{cfg: Config{Consumer: c, Logf: func(string, ...any) {}, Outage: func(error) {},
				Recheck: func(context.Context) error {
					return &kafka.Error{Broker: "b:9092", Problem: kafka.ProblemMissingTopic, Topics: []string{"raw"}}
				},
			}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := w.feed(ctx, make(chan ingest.Item, 1)); err == nil || !kafka.Fatal(err) {
				t.Fatalf("feed: %v, want the fatal error", err)
			}
		})
	}
}
