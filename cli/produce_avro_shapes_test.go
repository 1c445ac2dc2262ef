package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"engram/backend/kafka"
)

// `engram produce --format avro` with the built-in schema takes every
// Kafka-bus shape, an OperationalSignal's subtype and payload included,
// and what lands on the real broker reads back, through the real
// registry, as the JSON that was given.
func TestProduceAvroNewerShapes(t *testing.T) {
	cfg, kargs := testKafka(t)
	regURL := testRegistry(t)
	kargs = append(kargs, "--kafka-schema-registry-url", regURL)
	cfg.Registry = kafka.SchemaRegistry{URL: regURL}
	files, _ := filepath.Glob("../model/testdata/shapes/valid-*.json")
	var in strings.Builder
	want := map[string]any{}
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "casehub") {
			continue // CaseHub's events do not travel on the bus
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		want[v["eventId"].(string)] = v
		line, _ := json.Marshal(v)
		in.Write(line)
		in.WriteByte('\n')
	}
	if len(want) < 4 || want["cs-sig-1"] == nil {
		t.Fatalf("fixtures: %d", len(want))
	}
	c := newCLI(t)
	subject := cfg.Topics.Raw + "-value"
	_, stderr, code := c.run(in.String(), append([]string{"produce", "--format", "avro", "--subject", subject}, kargs...)...)
	if code != 0 || !strings.Contains(stderr, "as Avro (subject "+subject) {
		t.Fatalf("produce --format avro: code %d, %s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := kafka.NewWatch(ctx, cfg, kafka.WatchOptions{Topics: []string{cfg.Topics.Raw}, From: kafka.FromStart})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got := map[string]bool{}
	for len(got) < len(want) {
		recs, err := w.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d: %v", len(got), err)
		}
		for _, r := range recs {
			if r.Format != kafka.FormatAvro || r.DecodeErr != nil {
				t.Fatalf("%s: format %q, %v", r.Key, r.Format, r.DecodeErr)
			}
			var v any
			if err := json.Unmarshal(r.Value, &v); err != nil || !reflect.DeepEqual(v, want[string(r.Key)]) {
				t.Fatalf("%s read back as\n%s\nwant %v", r.Key, r.Value, want[string(r.Key)])
			}
			got[string(r.Key)] = true
		}
	}
}
