package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/backend/kafka"
)

// indexedNoticeSchema is an Avro schema of the memory.indexed notification
// as engram writes it (eventId, timestamp, index, objectStorageKey).
const indexedNoticeSchema = `{"type":"record","name":"MemoryIndexed","namespace":"engram.test","fields":[
 {"name":"eventId","type":"string"},{"name":"timestamp","type":"string"},
 {"name":"index","type":"string"},{"name":"objectStorageKey","type":"string"}]}`

// Verify over the Kafka topics reads Avro notifications as it reads JSON
// ones, through the real registry: three indexed events, announced on
// the enriched topic in JSON and on the indexed topic once in Avro and
// twice in JSON, are all announced; a message beside them whose schema id
// the registry does not know is a bad notification of its own, named by
// topic, partition and offset, with the decode failure as the reason.
func TestVerifyAvroNotifications(t *testing.T) {
	cfg, kargs := testKafka(t)
	regURL := testRegistry(t)
	kargs = append(kargs, "--kafka-schema-registry-url", regURL)
	cfg.Registry = kafka.SchemaRegistry{URL: regURL}
	c := newCLI(t)
	// Ingested with the topic files, whose lines are then put on the
	// broker by hand: the known answer is what the test writes there.
	if _, stderr, code := c.run(demoLines(3), "ingest"); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	lines := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(c.data, "topics", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	enriched, indexed := lines("experience.enriched"), lines("memory.indexed")
	if len(enriched) != 3 || len(indexed) != 3 {
		t.Fatalf("topic files: %d enriched, %d indexed", len(enriched), len(indexed))
	}
	keyOf := func(l string) []byte {
		var v struct {
			EventID string `json:"eventId"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.EventID == "" {
			t.Fatalf("notification %s: %v", l, err)
		}
		return []byte(v.EventID)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	codec, err := kafka.NewAvroCodec(cfg.Registry)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := codec.Encoder(ctx, cfg.Topics.Indexed+"-value", indexedNoticeSchema)
	if err != nil {
		t.Fatal(err)
	}
	avroNotice, err := enc.Encode([]byte(indexed[0]))
	if err != nil {
		t.Fatal(err)
	}
	const unknownID = 0x7ffffff2
	unknown := append(binary.BigEndian.AppendUint32([]byte{0}, unknownID), avroNotice[5:]...)
	// ProduceRaw writes to the raw topic: a client per notification topic.
	produce := func(topic string, recs []kafka.RawRecord) {
		tc := cfg
		tc.Topics.Raw, tc.Topics.Enriched, tc.Topics.Indexed = topic, topic+".unused-e", topic+".unused-i"
		client, err := kafka.New(tc)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		if _, err := client.ProduceRaw(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	var recs []kafka.RawRecord
	for _, l := range enriched {
		recs = append(recs, kafka.RawRecord{Key: keyOf(l), Value: []byte(l)})
	}
	produce(cfg.Topics.Enriched, recs)
	produce(cfg.Topics.Indexed, []kafka.RawRecord{
		{Key: keyOf(indexed[0]), Value: avroNotice},
		{Key: keyOf(indexed[1]), Value: []byte(indexed[1])},
		{Key: keyOf(indexed[2]), Value: []byte(indexed[2])},
		{Key: []byte("unknown-schema"), Value: unknown},
	})

	out, stderr, code := c.run("", append([]string{"verify", "--json"}, kargs...)...)
	var rep struct {
		Agreeing      int64            `json:"agreeing"`
		Differences   map[string]int64 `json:"differences"`
		First         []struct{ Kind, Key, EventID, Detail string }
		Notifications *struct{ Indexed, Announced, Unannounced, Messages int64 }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json: %v\n%s\n%s", err, out, stderr)
	}
	if code != 1 || rep.Agreeing != 3 || len(rep.Differences) != 1 || rep.Differences["bad-notification"] != 1 {
		t.Fatalf("verify: code %d, agreeing %d, differences %v\n%s%s", code, rep.Agreeing, rep.Differences, out, stderr)
	}
	if n := rep.Notifications; n == nil || n.Indexed != 3 || n.Announced != 3 || n.Unannounced != 0 {
		t.Fatalf("notifications %+v: the Avro one is not counted as an announcement", n)
	}
	wantDetail := fmt.Sprintf("avro: schema id %d is unknown to the schema registry %s", unknownID, regURL)
	if len(rep.First) != 1 || rep.First[0].Kind != "bad-notification" ||
		!strings.HasPrefix(rep.First[0].Key, cfg.Topics.Indexed+"[") || !strings.Contains(rep.First[0].Key, "]@") ||
		!strings.HasPrefix(rep.First[0].Detail, wantDetail) {
		t.Fatalf("first differences %+v, want one bad-notification on %s saying %q", rep.First, cfg.Topics.Indexed, wantDetail)
	}

	// The text report names it the same way, on one line.
	out, _, code = c.run("", append([]string{"verify"}, kargs...)...)
	if code != 1 || !strings.Contains(out, "bad-notification "+rep.First[0].Key) || !strings.Contains(out, wantDetail) ||
		!strings.Contains(out, "3 of 3 indexed events announced, 0 unannounced") {
		t.Fatalf("verify: code %d\n%s", code, out)
	}
}
