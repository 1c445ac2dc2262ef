package kafka

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// link follows, from a client's connection attempts, whether the brokers
// can be reached. franz-go retries a broker that went away by itself and,
// reading partitions without a group, reports nothing meanwhile: without
// this a poll would block in silence through an outage, and a poll after
// it could not tell the broker was back before the first record.
type link struct {
	mu   sync.Mutex
	down map[string]error // broker address: its last failed attempt
	wake chan struct{}    // closed, and made anew, when down changes
}

func newLink() *link { return &link{down: map[string]error{}, wake: make(chan struct{})} }

// OnBrokerConnect implements kgo.HookBrokerConnect: an attempt counts once
// it has dialled, and passed TLS and SASL, or failed at one of them.
func (l *link) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client closing, not the broker
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	l.mu.Lock()
	defer l.mu.Unlock()
	_, was := l.down[addr]
	switch {
	case err != nil:
		l.down[addr] = err
	case was:
		delete(l.down, addr)
	}
	if was != (err != nil) {
		close(l.wake)
		l.wake = make(chan struct{})
	}
}

// failing is one unreachable broker, a channel closed at the next change,
// and the broker's last error ("", nil when every broker tried lately
// answered).
func (l *link) failing() (addr string, changed <-chan struct{}, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for a, e := range l.down {
		if addr == "" || a < addr {
			addr, err = a, e
		}
	}
	return addr, l.wake, err
}

// poll is PollRecords cut short when the link changes (a broker becomes
// unreachable, or answers again), so the caller can say so. A poll cut
// short takes no records: franz-go keeps them for the next.
func (l *link) poll(ctx context.Context, cl *kgo.Client, maxRecords int) kgo.Fetches {
	_, changed, _ := l.failing()
	pctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the goroutine below too
	go func() {
		select {
		case <-changed:
			cancel()
		case <-pctx.Done():
		}
	}()
	return cl.PollRecords(pctx, maxRecords)
}
