package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"engram/backend/kafka"
	"engram/model"
)

// indexedCatchUp is the catch-up of an upgrade from memory.indexed, when
// Kafka is configured: the deployment announces there every event it
// indexes, whatever the event's timestamp, so reading the topic from where
// it ended when the upgrade began finds the events written meanwhile that
// a listing of the archive from the start's day misses (an event stamped
// days before, delivered late).
type indexedCatchUp struct {
	cfg  kafka.Config
	from map[int32]int64 // the next offset to read, by partition
}

// startIndexedCatchUp notes where memory.indexed ends now. It is nil when
// Kafka is not configured, or (said on stderr) when the topic cannot be
// read: the catch-up then lists the archive only.
func startIndexedCatchUp(ctx context.Context, e *env, conf *resolved) *indexedCatchUp {
	cfg, ok, err := kafkaConfig(conf)
	if !ok {
		return nil
	}
	var from map[int32]int64
	if err == nil {
		cctx, cancel := context.WithTimeout(ctx, kafkaCheckTimeout)
		from, err = kafka.EndOffsets(cctx, cfg, cfg.Topics.Indexed)
		cancel()
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "engram: the catch-up cannot read %s (%s): it lists the archive only\n",
			safeLine(cfg.Topics.Indexed), safeLine(conf.redact(err.Error())))
		return nil
	}
	return &indexedCatchUp{cfg: cfg, from: from}
}

// keys are the archive keys memory.indexed announced since the last call
// (since the upgrade began, the first time), and how many notifications
// named them. A notification that does not parse, or names no archive
// key, is counted in bad and skipped: the listing still covers its day.
func (c *indexedCatchUp) keys(ctx context.Context) (keys []string, notes, bad int, err error) {
	seen := map[string]bool{}
	end, err := kafka.ScanFrom(ctx, c.cfg, c.cfg.Topics.Indexed, c.from, func(r *kafka.Record) error {
		notes++
		var n model.Indexed
		if json.Unmarshal(r.Value, &n) != nil || !strings.HasPrefix(n.ObjectStorageKey, "events/") {
			bad++
			return nil
		}
		seen[n.ObjectStorageKey] = true
		return nil
	})
	if err != nil {
		return nil, notes, bad, err
	}
	maps.Copy(c.from, end)
	return slices.Sorted(maps.Keys(seen)), notes, bad, nil
}

// where is the topic and the offsets (partition@offset) the next read
// starts from.
func (c *indexedCatchUp) where() string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(c.from)) {
		parts = append(parts, fmt.Sprintf("%d@%d", p, c.from[p]))
	}
	return c.cfg.Topics.Indexed + " at " + strings.Join(parts, ",")
}
