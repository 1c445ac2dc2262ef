package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// testRegistry returns the URL of the real schema registry (Apicurio,
// started by .ci/services/schemaregistry.sh), skipping the test when none
// is configured or it does not answer (failing instead under
// ENGRAM_REQUIRE_SERVICES=1).
func testRegistry(t *testing.T) string {
	t.Helper()
	u := os.Getenv("ENGRAM_TEST_SCHEMA_REGISTRY_URL")
	require := os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1"
	if u == "" {
		if require {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_SCHEMA_REGISTRY_URL is not set (bash .ci/services/up.sh && source .ci/services/.env)")
		}
		t.Skip("set ENGRAM_TEST_SCHEMA_REGISTRY_URL (bash .ci/services/schemaregistry.sh start) to run the schema registry tests")
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(strings.TrimRight(u, "/") + "/subjects")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = errors.New(resp.Status)
		}
	}
	if err != nil {
		if require {
			t.Fatalf("ENGRAM_REQUIRE_SERVICES=1 but the schema registry %s does not answer: %v", u, err)
		}
		t.Skipf("the schema registry %s does not answer: %v", u, err)
	}
	return u
}

// wire builds a wire-format value by hand: magic byte, id, body.
func wire(id uint32, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, id), body...)
}

// Avro and JSON mixed on one topic, through the real registry and broker:
// the consumer hands out Avro values as the event's JSON (the schema
// fetched from the registry by id), JSON as it was; an unknown schema id
// and a body that does not fit its schema are the records' own errors,
// and rejecting such a record puts its stored bytes and the reason on the
// rejected topic.
func TestAvroRegistryMixedTopic(t *testing.T) {
	url := testRegistry(t)
	cfg := testConfig(t)
	cfg.Topics.Audit = ""
	cfg.Registry = SchemaRegistry{URL: url}
	c := setup(t, cfg, 1, cfg.Topics.Raw, cfg.Topics.Rejected)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The producer's side: register (or find) the schema, encode.
	prodCodec, err := NewAvroCodec(cfg.Registry)
	if err != nil {
		t.Fatal(err)
	}
	subject := cfg.Topics.Raw + "-value"
	enc, err := prodCodec.Encoder(ctx, subject, ExperienceEventSchema)
	if err != nil {
		t.Fatal(err)
	}
	again, err := prodCodec.Encoder(ctx, subject, ExperienceEventSchema)
	if err != nil || again.ID != enc.ID {
		t.Fatalf("registering the same schema again: id %v, %v; want %d", again, err, enc.ID)
	}
	demo, err := os.ReadFile("../../model/testdata/demo-event.json")
	if err != nil {
		t.Fatal(err)
	}
	avroValue, err := enc.Encode(demo)
	if err != nil {
		t.Fatal(err)
	}
	if avroValue[0] != 0 || int(binary.BigEndian.Uint32(avroValue[1:5])) != enc.ID {
		t.Fatalf("not the wire format: % x", avroValue[:5])
	}
	jsonValue := bytes.Replace(demo, []byte("demo-event-001"), []byte("demo-event-002"), 1)
	unknown := wire(0x7ffffff0, avroValue[5:])
	badBody := wire(uint32(enc.ID), avroValue[5:len(avroValue)/2])
	if _, err := c.ProduceRaw(ctx, []RawRecord{
		{Key: []byte("avro"), Value: avroValue},
		{Key: []byte("json"), Value: jsonValue},
		{Key: []byte("unknown"), Value: unknown},
		{Key: []byte("bad-body"), Value: badBody},
		{Key: []byte("avro-2"), Value: avroValue},
	}); err != nil {
		t.Fatal(err)
	}

	cons, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := map[string]*Record{}
	for len(got) < 5 {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		for _, r := range recs {
			got[string(r.Key)] = r
		}
	}
	for _, k := range []string{"avro", "avro-2"} {
		r := got[k]
		if r.DecodeErr != nil || r.Format != FormatAvro || r.SchemaID != enc.ID || !bytes.Equal(r.Stored(), avroValue) {
			t.Fatalf("%s: %+v", k, r)
		}
		sameJSON(t, r.Value, demo)
	}
	if r := got["json"]; r.Format != formatJSON || r.DecodeErr != nil || !bytes.Equal(r.Value, jsonValue) {
		t.Fatalf("json: %+v", r)
	}
	var de *DecodeError
	if r := got["unknown"]; !errors.As(r.DecodeErr, &de) || de.Kind != decodeUnknownSchema ||
		!strings.Contains(r.DecodeErr.Error(), "schema id 2147483632 is unknown to the schema registry "+url) {
		t.Fatalf("unknown id: %v", r.DecodeErr)
	}
	if r := got["bad-body"]; !errors.As(r.DecodeErr, &de) || de.Kind != decodeBadBody ||
		!strings.Contains(r.DecodeErr.Error(), "does not decode with its schema") {
		t.Fatalf("bad body: %v", r.DecodeErr)
	}
	// The schema was fetched once and kept.
	if !cons.codec.serde.IsRegistered(enc.ID, sr.DecodeFn) {
		t.Error("the schema is not cached after its first use")
	}

	// Rejecting: the stored bytes, with the reason.
	for _, k := range []string{"unknown", "bad-body"} {
		r := got[k]
		if err := cons.Reject(ctx, r, []string{r.DecodeErr.Error()}); err != nil {
			t.Fatal(err)
		}
	}
	cons.Done(got["avro"], got["json"], got["unknown"], got["bad-body"], got["avro-2"])
	rej := readAll(t, cfg, 2, cfg.Topics.Rejected)[cfg.Topics.Rejected]
	for _, r := range rej {
		orig := got[string(r.Key)]
		if !bytes.Equal(r.Stored(), orig.Stored()) {
			t.Errorf("rejected %s: stored % x, want % x", r.Key, r.Stored(), orig.Stored())
		}
		if reason := headerMap(r)[HeaderRejectReason]; len(reason) != 1 || reason[0] != orig.DecodeErr.Error() {
			t.Errorf("rejected %s: reasons %q", r.Key, reason)
		}
		// Read back through a Watch (as tail and the Topics view read), the
		// rejected Avro value is explained again, not hidden.
		if r.Format != FormatAvro || r.DecodeErr == nil {
			t.Errorf("rejected %s read back: %+v", r.Key, r)
		}
	}
}

// A registry that does not answer is an error of each message, told at
// once (not after a timeout each) while it stays away; never a stop.
func TestAvroRegistryOutage(t *testing.T) {
	codec, err := NewAvroCodec(SchemaRegistry{URL: "http://" + freePort(t) + "/apis/ccompat/v7", Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v := wire(12, []byte{2, 'a'})
	var de *DecodeError
	_, id, err := codec.Decode(context.Background(), v)
	if !errors.As(err, &de) || de.Kind != decodeRegistryDown || id != 12 || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("first: %v", err)
	}
	start := time.Now()
	if _, _, err := codec.Decode(context.Background(), v); !errors.As(err, &de) || de.Kind != decodeRegistryDown {
		t.Fatalf("second: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("the second message waited %s for a registry known to be away", d)
	}
	// JSON needs no registry.
	r := &Record{Value: []byte(`{}`)}
	codec.decodeValue(context.Background(), r)
	if r.DecodeErr != nil {
		t.Fatal(r.DecodeErr)
	}
}

// An https registry with a private CA: trusted with CAFile, refused (as
// an outage of that message, with the certificate error) without it.
func TestAvroRegistryTLS(t *testing.T) {
	testRegistry(t)
	u, ca := os.Getenv("ENGRAM_TEST_SCHEMA_REGISTRY_TLS_URL"), os.Getenv("ENGRAM_TEST_SCHEMA_REGISTRY_CA_FILE")
	if u == "" || ca == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_SCHEMA_REGISTRY_TLS_URL or _CA_FILE is not set")
		}
		t.Skip("set ENGRAM_TEST_SCHEMA_REGISTRY_TLS_URL and ENGRAM_TEST_SCHEMA_REGISTRY_CA_FILE (.ci/services/schemaregistry.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	codec, err := NewAvroCodec(SchemaRegistry{URL: u, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := codec.Encoder(ctx, "engram-test-tls-value", ExperienceEventSchema)
	if err != nil {
		t.Fatal(err)
	}
	demo, _ := os.ReadFile("../../model/testdata/demo-event.json")
	v, err := enc.Encode(demo)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := NewAvroCodec(SchemaRegistry{URL: u, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := reader.Decode(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, out, demo)

	untrusting, err := NewAvroCodec(SchemaRegistry{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	var de *DecodeError
	if _, _, err := untrusting.Decode(ctx, v); !errors.As(err, &de) || de.Kind != decodeRegistryDown || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v", err)
	}
	if _, err := NewAvroCodec(SchemaRegistry{URL: u, CAFile: "/nonexistent.pem"}); err == nil {
		t.Fatal("a missing CA file was accepted")
	}
}
