package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

func eventSchema(t testing.TB) avro.Schema {
	t.Helper()
	s, err := parseAvroSchema(ExperienceEventSchema)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sameJSON compares two JSON texts as values.
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// The demo event survives JSON -> Avro -> JSON unchanged, and the Avro
// body is what hamba/avro's own decoder reads with the schema (our
// encoder writes real Avro, not a look-alike).
func TestAvroRoundTripDemoEvent(t *testing.T) {
	s := eventSchema(t)
	demo, err := os.ReadFile("../../model/testdata/demo-event.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := jsonToAvro(s, demo)
	if err != nil {
		t.Fatal(err)
	}
	back, err := avroToJSON(s, body)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, back, demo)

	var generic map[string]any
	if err := avro.Unmarshal(s, body, &generic); err != nil {
		t.Fatalf("hamba/avro cannot read our body: %v", err)
	}
	if generic["eventId"] != "demo-event-001" {
		t.Fatalf("hamba/avro read eventId %v", generic["eventId"])
	}
}

// Free-form members (engram.json strings), nulls left out, every optional
// block, the new result members.
func TestAvroRoundTripFreeFormAndNulls(t *testing.T) {
	s := eventSchema(t)
	in := []byte(`{"eventId":"e1","timestamp":"2026-05-08T22:31:25Z","type":"tool_result",
	 "context":{"sessionId":"s","source":"system","tenantId":"t1"},
	 "input":{"text":"hi","structured":{"a":[1,2,{"b":null}],"c":"d"}},
	 "internalState":{"confidence":1,"emotionalVector":{"joy":0.5,"fear":0}},
	 "action":{"tool":"grep","parameters":{"q":"x","n":3}},
	 "result":{"output":"o","success":false,"isError":true,"content":[{"type":"text","text":"t"},{"type":"image","mimeType":"image/png"}]},
	 "evaluation":{"rewardScore":0.5,"selfAssessedQuality":0.25,"userFeedback":"positive","hallucinated":false},
	 "importanceScore":0.3,"objectStorageKey":"k","tags":[]}`)
	body, err := jsonToAvro(s, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := avroToJSON(s, body)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, out, in)

	// Explicit nulls come back as absent members.
	body, err = jsonToAvro(s, []byte(`{"eventId":"e","timestamp":"2026-05-08T22:31:25Z","type":"user_input","context":{"sessionId":"s","userId":null},"input":{"text":"x"},"action":null}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ = avroToJSON(s, body)
	sameJSON(t, out, []byte(`{"eventId":"e","timestamp":"2026-05-08T22:31:25Z","type":"user_input","context":{"sessionId":"s"},"input":{"text":"x"}}`))
}

func TestJSONToAvroErrorsNameThePath(t *testing.T) {
	s := eventSchema(t)
	base := `"eventId":"e","timestamp":"2026-05-08T22:31:25Z","type":"user_input","context":{"sessionId":"s"}`
	for _, c := range []struct{ in, want string }{
		{`{` + base + `}`, "input: missing"},
		{`{` + base + `,"input":{"text":5}}`, "input.text: is a number, the Avro schema wants a string"},
		{`{` + base + `,"input":{"text":"x"},"surprise":1}`, "surprise: not in the Avro schema"},
		{`{` + base + `,"input":{"text":"x"},"tags":["a",1]}`, "tags[1]: is a number"},
		{`{` + base + `,"input":{"text":"x"},"result":{"latencyMs":"fast"}}`, "result.latencyMs: is a string"},
		{`[1]`, "(the event): is an array"},
		{`{"a":`, "not JSON"},
	} {
		_, err := jsonToAvro(s, []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("JSONToAvro(%s) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

func TestAvroToJSONRefusesBadBodies(t *testing.T) {
	s := eventSchema(t)
	demo, _ := os.ReadFile("../../model/testdata/demo-event.json")
	body, err := jsonToAvro(s, demo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := avroToJSON(s, body[:len(body)/2]); err == nil {
		t.Error("a truncated body decoded")
	}
	if _, err := avroToJSON(s, append(bytes.Clone(body), 1, 2, 3)); err == nil || !strings.Contains(err.Error(), "left over") {
		t.Errorf("trailing bytes: %v", err)
	}
	// An array block claiming 2^62 null items must not loop.
	nulls, _ := parseAvroSchema(`{"type":"array","items":"null"}`)
	huge := binary.AppendVarint(nil, 1<<62)
	if _, err := avroToJSON(nulls, huge); err == nil {
		t.Error("a block of 2^62 items decoded")
	}
	// NaN has no JSON.
	d, _ := parseAvroSchema(`"double"`)
	nan := []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}
	if _, err := avroToJSON(d, nan); err == nil {
		t.Error("NaN decoded to JSON")
	}
}

func TestWireHeader(t *testing.T) {
	if isWire([]byte(`{"a":1}`)) || isWire(nil) || !isWire([]byte{0}) {
		t.Fatal("IsWire")
	}
	id, body, err := splitWire([]byte{0, 0, 0, 1, 2, 9})
	if err != nil || id == 258 && len(body) != 1 || id != 258 {
		t.Fatalf("SplitWire = %d %v %v", id, body, err)
	}
	var de *DecodeError
	if _, _, err := splitWire([]byte{0, 1}); !errors.As(err, &de) || de.Kind != decodeBadHeader {
		t.Fatalf("short header: %v", err)
	}
	// Without a registry an Avro value is an error of its own, JSON is left alone.
	c, err := NewAvroCodec(SchemaRegistry{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Record{Value: []byte{0, 0, 0, 0, 7, 2}}
	c.decodeValue(context.Background(), r)
	if !errors.As(r.DecodeErr, &de) || de.Kind != decodeNoRegistry || r.Format != FormatAvro || r.SchemaID != 7 {
		t.Fatalf("no registry: %+v", r)
	}
	if !strings.Contains(r.DecodeErr.Error(), "kafka.schema_registry_url") {
		t.Errorf("the error does not say what to set: %v", r.DecodeErr)
	}
	j := &Record{Value: []byte(`{"a":1}`)}
	c.decodeValue(context.Background(), j)
	if j.DecodeErr != nil || j.Wire != nil || string(j.Stored()) != `{"a":1}` {
		t.Fatalf("JSON touched: %+v", j)
	}
}

func TestSchemaRegistryConfig(t *testing.T) {
	for _, bad := range []SchemaRegistry{
		{URL: "ftp://x"}, {URL: "http://u:p@host:1"}, {User: "u", Password: "p"}, {URL: "http://h:1", User: "u"},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	s := SchemaRegistry{URL: "http://h:1", User: "u", Password: "hunter2"}
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Brokers: []string{"h:1"}, Registry: s}.WithDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{cfg.String(), s.String(), s.GoString()} {
		if strings.Contains(out, "hunter2") || !strings.Contains(out, "http://h:1") {
			t.Errorf("%q", out)
		}
	}
}

// FuzzAvroWire: no wire-format value, however corrupt, makes the decoder
// panic, loop or allocate without bound, and whatever decodes is JSON.
func FuzzAvroWire(f *testing.F) {
	s := eventSchema(f)
	demo, err := os.ReadFile("../../model/testdata/demo-event.json")
	if err != nil {
		f.Fatal(err)
	}
	body, err := jsonToAvro(s, demo)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append([]byte{0, 0, 0, 0, 1}, body...))
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Add([]byte{0})
	f.Add([]byte(`{"eventId":"x"}`))
	// Every kind of schema the decoder walks, a recursive one included.
	sink, err := parseAvroSchema(`{"type":"record","name":"Node","fields":[
	  {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
	  {"name":"f","type":{"type":"fixed","name":"F","size":2}},
	  {"name":"b","type":"bytes"},{"name":"i","type":"int"},{"name":"l","type":"long"},{"name":"fl","type":"float"},
	  {"name":"m","type":{"type":"map","values":["null","boolean","double",{"type":"string","engram.json":true}]}},
	  {"name":"kids","type":{"type":"array","items":"Node"}}]}`)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 0, 0, 2, 2, 'a', 'b', 2, 0xff, 4, 6, 0, 0, 0x80, 0x3f, 2, 2, 'k', 6, 4, 'n', 'u', 0, 0})
	f.Fuzz(func(t *testing.T, value []byte) {
		if len(value) > 4 && value[4]&1 == 0 { // schema id even: the kitchen sink
			if _, b, err := splitWire(value); err == nil {
				if out, err := avroToJSON(sink, b); err == nil && !json.Valid(out) {
					t.Fatalf("decoded to invalid JSON: %q", out)
				}
			}
			return
		}
		if !isWire(value) {
			return
		}
		_, b, err := splitWire(value)
		if err != nil {
			return
		}
		out, err := avroToJSON(s, b)
		if err == nil && !json.Valid(out) {
			t.Fatalf("decoded to invalid JSON: %q", out)
		}
		if err == nil {
			// What decodes encodes back to the same body.
			again, err := jsonToAvro(s, out)
			if err != nil {
				t.Fatalf("decoded JSON does not encode: %v\n%s", err, out)
			}
			out2, err := avroToJSON(s, again)
			if err != nil || !bytes.Equal(out, out2) {
				t.Fatalf("re-encoded value decodes differently: %v\n%s\n%s", err, out, out2)
			}
		}
	})
}
