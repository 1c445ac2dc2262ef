package uikit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
)

var _ ingest.OutageObserver = Observer{}

func TestOutageShownInStatusLine(t *testing.T) {
	ch := make(chan tea.Msg, 2)
	o := Observer{Ctx: context.Background(), Ch: ch}
	o.Outage(ingest.Outage{Stage: ingest.StageIndex, Err: errors.New("connection refused"), Attempt: 3, Wait: time.Second})
	o.Recovered(ingest.StageIndex)
	first, second := (<-ch).(ObservedMsg), (<-ch).(ObservedMsg)
	if !first.Err || !strings.Contains(first.Text, "outage: index: connection refused; retrying in 1s (attempt 3)") {
		t.Fatalf("outage status %+v", first)
	}
	if second.Err || !strings.Contains(second.Text, "index: server answering again") {
		t.Fatalf("recovered status %+v", second)
	}
}
