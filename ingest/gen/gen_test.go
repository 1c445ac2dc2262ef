package gen

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type event struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Input     struct {
		Text string `json:"text"`
	} `json:"input"`
	Result *struct {
		Output    string `json:"output"`
		Success   bool   `json:"success"`
		LatencyMs int    `json:"latencyMs"`
		ErrorCode string `json:"errorCode"`
	} `json:"result"`
}

func decode(t *testing.T, b []byte) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// The demo reads like a real agent's day: an outcome's text says what its
// result says, and a turn's events happen one after the other, the outcome
// after the action by the latency of its call; with a clock too.
func TestTurnsAreConsistent(t *testing.T) {
	clock := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	for _, cfg := range []Config{{Seed: 1}, {Seed: 2, Clock: func() time.Time { return clock }}} {
		g := New(cfg)
		failed := 0
		for range 200 {
			turn := g.Turn()
			var ts []time.Time
			for _, b := range turn {
				e := decode(t, b)
				at, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
				ts = append(ts, at)
			}
			out := decode(t, turn[2])
			if !out.Result.Success {
				failed++
				if strings.Contains(out.Input.Text, "Approved") || !strings.Contains(out.Input.Text, "failed") {
					t.Fatalf("a failed outcome (%s) reads %q", out.Result.ErrorCode, out.Input.Text)
				}
			}
			if !ts[0].Before(ts[1]) || ts[2].Sub(ts[1]) < time.Duration(out.Result.LatencyMs)*time.Millisecond {
				t.Fatalf("clock %v: a turn's times %v do not follow each other by the call's %dms", cfg.Clock != nil, ts, out.Result.LatencyMs)
			}
		}
		if failed == 0 {
			t.Fatal("no failure in 200 turns: the test saw nothing")
		}
	}
}
