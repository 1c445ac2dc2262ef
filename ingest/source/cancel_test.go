package source_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"engram/ingest"
	"engram/ingest/source"
)

// zeros is an endless line without a newline, like /dev/zero (of a
// printable byte: control bytes stop a read as not text at once).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// readCancelled cancels a Read of r after a moment and says whether it
// returned the cancellation within a second.
func readCancelled(t *testing.T, r io.Reader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan ingest.Item, 16)
	go func() {
		for range out {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- source.Read(ctx, r, "zeros", out) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Read returned %v, want the cancellation", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Read goes on skipping the line after its context was cancelled")
	}
}

// Cancellation works while a line without a newline is skipped.
func TestReadCancelledInEndlessLine(t *testing.T) {
	readCancelled(t, zeros{})
}

// ... and while an endless array element is read.
func TestReadCancelledInEndlessArray(t *testing.T) {
	readCancelled(t, io.MultiReader(strings.NewReader(`[{"a":"`), zeros{}))
}
