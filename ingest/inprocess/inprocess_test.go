package inprocess

import (
	"context"
	"testing"

	"engram/ingest"
	"engram/model"
)

// The inspector's tests run both calls through a working pipeline; these
// are the calls when none can be built (no stores configured).

func TestRecordWithoutPipeline(t *testing.T) {
	if tr, err := (Pipeline{}).Record(context.Background(), &model.Event{}, nil); err == nil || tr != nil {
		t.Fatalf("recorded without stores: %v %v", tr, err)
	}
}

func TestIngestWithoutPipelineFailsEveryItem(t *testing.T) {
	items := make(chan ingest.Item, 3)
	for range 3 {
		items <- ingest.Item{}
	}
	close(items)
	if sum := (Pipeline{}).Ingest(context.Background(), items, nil); sum.Failed != 3 || sum.Total() != 3 {
		t.Fatalf("summary %+v, want 3 failed", sum)
	}
}
