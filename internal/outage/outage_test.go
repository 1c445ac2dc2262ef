package outage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A lasting failure is three lines: when it starts, a reminder a minute
// on, and when it is over; the waits double up to Max.
func TestReporterRateLimits(t *testing.T) {
	var lines []string
	now := time.Unix(0, 0)
	r := &Reporter{
		Logf:    func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) },
		Waiting: "the broker", Resumed: "following again",
		Min: time.Microsecond, Max: 8 * time.Microsecond,
		Now: func() time.Time { return now },
	}
	ctx := context.Background()
	for range 100 {
		if !r.Failed(ctx, errors.New("connection\nrefused")) {
			t.Fatal("Failed gave up with ctx alive")
		}
		now = now.Add(time.Second)
	}
	if !r.Down() || r.wait != 8*time.Microsecond {
		t.Fatalf("down %v, wait %s: want down and the wait at Max", r.Down(), r.wait)
	}
	r.OK()
	r.OK()
	if r.Down() {
		t.Fatal("still down after OK")
	}
	want := []string{
		"connection refused; waiting for the broker, retrying",
		"still waiting for the broker after 1m0s (61 failed attempts): connection refused",
		"the broker back after 1m40s (100 failed attempts); following again",
	}
	if len(lines) != len(want) {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start %q", i, lines[i], w)
		}
	}
}

func TestReporterStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &Reporter{Logf: func(string, ...any) {}, Min: time.Hour}
	if r.Failed(ctx, errors.New("x")) {
		t.Fatal("Failed waited out an hour with ctx done")
	}
}
