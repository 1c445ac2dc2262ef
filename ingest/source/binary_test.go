package source_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"engram/ingest"
	"engram/ingest/source"
)

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// readBinary reads data and returns the items sent and Read's error.
func readBinary(t *testing.T, data []byte) ([]ingest.Item, error) {
	t.Helper()
	out := make(chan ingest.Item, 1<<16)
	err := source.Read(context.Background(), bytes.NewReader(data), "in", out)
	close(out)
	var items []ingest.Item
	for it := range out {
		items = append(items, it)
	}
	return items, err
}

// Input that is not text (like /dev/urandom) stops the run at once, with
// a message saying so, rather than becoming thousands of rejects.
func TestReadStopsOnBinaryInput(t *testing.T) {
	items, err := readBinary(t, randomBytes(4<<20))
	if err == nil || !strings.Contains(err.Error(), "in: not text") {
		t.Fatalf("want in: not text, got %v", err)
	}
	if len(items) > 0 {
		t.Errorf("%d items sent from binary input", len(items))
	}
}

// Text followed by binary data: what came before is read, and the run
// stops where the binary data begins, saying on which line.
func TestReadStopsWhereTextTurnsBinary(t *testing.T) {
	var b bytes.Buffer
	for range 1000 { // more than the first read checkText looks at
		b.WriteString(`{"eventId":"a"}` + "\n")
	}
	b.Write(randomBytes(4 << 20))
	items, err := readBinary(t, b.Bytes())
	if err == nil || !strings.Contains(err.Error(), "not text") || !strings.HasPrefix(err.Error(), "in:") {
		t.Fatalf("want in:LINE: ... not text, got %v", err)
	}
	if len(items) < 1000 || len(items) > 1000+source.BinaryLines {
		t.Errorf("%d items sent, want the 1000 text lines and at most %d more", len(items), source.BinaryLines)
	}
}
