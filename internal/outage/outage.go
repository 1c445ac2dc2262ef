package outage

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Default backoff and reminder interval: a retry soon after a blip, no
// more than one attempt every 5 s through a long outage, and a line a
// minute to say the command is still there and still waiting.
const (
	defaultMin    = 100 * time.Millisecond
	defaultMax    = 5 * time.Second
	defaultRemind = time.Minute
)

// Reporter tracks one kind of failure of one loop; it is not safe for
// concurrent use.
type Reporter struct {
	// Logf prints a line (without its command's prefix).
	Logf func(format string, args ...any)
	// Waiting says what the loop waits for ("the broker 127.0.0.1:9092").
	Waiting string
	// Resumed says what happens once it is back ("following again").
	Resumed string
	// Min and Max bound the wait between attempts (doubling from Min);
	// Remind is how often a lasting failure is mentioned again.
	Min, Max, Remind time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	since, said time.Time
	wait        time.Duration
	fails       int
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Failed records a failed attempt, reports it when due and waits before
// the next attempt; false when ctx ended meanwhile.
func (r *Reporter) Failed(ctx context.Context, err error) bool {
	now := r.now()
	minWait, maxWait, remind := orDefault(r.Min, defaultMin), orDefault(r.Max, defaultMax), orDefault(r.Remind, defaultRemind)
	r.fails++
	if r.fails == 1 {
		r.since, r.said, r.wait = now, now, minWait
		r.Logf("%s; waiting for %s, retrying (every %s, doubling to %s)", oneLine(err), r.Waiting, minWait, maxWait)
	} else {
		r.wait = min(2*r.wait, maxWait)
		if now.Sub(r.said) >= remind {
			r.said = now
			r.Logf("still waiting for %s after %s (%s): %s", r.Waiting, now.Sub(r.since).Round(time.Second), attempts(r.fails), oneLine(err))
		}
	}
	t := time.NewTimer(r.wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// OK records a successful attempt; after failures, it says they are over.
func (r *Reporter) OK() {
	if r.fails == 0 {
		return
	}
	r.Logf("%s back after %s (%s); %s", r.Waiting, r.now().Sub(r.since).Round(100*time.Millisecond), attempts(r.fails), r.Resumed)
	r.fails = 0
}

// Down says whether the last attempt failed.
func (r *Reporter) Down() bool { return r.fails > 0 }

func attempts(n int) string {
	if n == 1 {
		return "1 failed attempt"
	}
	return fmt.Sprintf("%d failed attempts", n)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
