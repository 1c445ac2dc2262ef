package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
)

var _ ingest.OutageObserver = chanObserver{}

func TestOutageShownInStatusLine(t *testing.T) {
	ch := make(chan tea.Msg, 2)
	o := chanObserver{ctx: context.Background(), ch: ch}
	o.Outage(ingest.Outage{Stage: ingest.StageIndex, Err: errors.New("connection refused"), Attempt: 3, Wait: time.Second})
	o.Recovered(ingest.StageIndex)
	first, second := (<-ch).(observedMsg), (<-ch).(observedMsg)
	if !first.err || !strings.Contains(first.text, "outage: index: connection refused; retrying in 1s (attempt 3)") {
		t.Fatalf("outage status %+v", first)
	}
	if second.err || !strings.Contains(second.text, "index: server answering again") {
		t.Fatalf("recovered status %+v", second)
	}
}
