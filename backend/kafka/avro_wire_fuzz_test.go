package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// pathSchema nests a record, an array of a union and a map of an enum, so
// that a decoding error has a path to name.
const pathSchema = `{"type":"record","name":"Outer","fields":[
  {"name":"a","type":{"type":"record","name":"A","fields":[{"name":"b","type":{"type":"array","items":["null","int"]}}]}},
  {"name":"m","type":{"type":"map","values":{"type":"enum","name":"E","symbols":["X","Y"]}}}]}`

// fakeRegistry serves the registry's GET /schemas/ids/{id}: 1 the event
// schema, 2 pathSchema, 3 a JSON schema, 4 Avro that does not parse, 5 a
// registry failing (HTTP 500); any other id is unknown (404).
func fakeRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/schemas/ids/"))
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		reply := func(code int, v any) {
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(v)
		}
		switch {
		case err != nil:
			reply(404, map[string]any{"error_code": 404, "message": "HTTP 404 Not Found"})
		case id == 1:
			reply(200, map[string]any{"schema": ExperienceEventSchema})
		case id == 2:
			reply(200, map[string]any{"schema": pathSchema})
		case id == 3:
			reply(200, map[string]any{"schema": `{"type":"object"}`, "schemaType": "JSON"})
		case id == 4:
			reply(200, map[string]any{"schema": `{"type":"record","name":"R","fields":[{"name":"x","type":"nosuch"}]}`})
		case id == 5:
			reply(500, map[string]any{"error_code": 50001, "message": "Error in the backend\ndata store"})
		default:
			reply(404, map[string]any{"error_code": 40403, "message": "Schema " + strconv.Itoa(id) + " not found"})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Each Avro decoding error names the path of the value it failed in, as
// jsonToAvro's errors do.
func TestAvroDecodeErrorsNameThePath(t *testing.T) {
	s, err := parseAvroSchema(pathSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body []byte
		want string
	}{
		{[]byte{4, 0, 10}, "a.b[1]: union branch 5 of a union of 2 types"},
		{[]byte{4, 0}, "a.b[1]: the body ends before the value does (2 bytes)"},
		{[]byte{0, 2, 6, 'x', ' ', 'y', 14}, `m["x y"]: enum E: symbol 7 of 2`},
		{[]byte{0, 2, 2, 'k', 18}, "m.k: enum E: symbol 9 of 2"},
		{[]byte{0, 2, 2, '\n', 18}, `m["\n"]: enum E`},
		{[]byte{0, 0, 1}, "(the event): bytes left over after the value"},
		{[]byte{}, "a.b: the body ends before the value does (0 bytes)"},
	} {
		_, err := avroToJSON(s, c.body)
		if err == nil || err.Error() != c.want && !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("avroToJSON(% x) = %v, want %q", c.body, err, c.want)
		}
	}
	// The event cut short: the error names a member of the event.
	demo, err := os.ReadFile("../../model/testdata/demo-event.json")
	if err != nil {
		t.Fatal(err)
	}
	es := eventSchema(t)
	body, err := jsonToAvro(es, demo)
	if err != nil {
		t.Fatal(err)
	}
	_, err = avroToJSON(es, body[:len(body)/2])
	if err == nil || !pathOfSchema(es, err.Error()) {
		t.Errorf("the event cut short: %v, want a path of the event first", err)
	}
}

// pathOfSchema reports whether msg starts with "(the event): " or with a
// path whose first step is a field of the record schema s.
func pathOfSchema(s avro.Schema, msg string) bool {
	if strings.HasPrefix(msg, "(the event): ") {
		return true
	}
	rs, ok := s.(*avro.RecordSchema)
	if !ok {
		return false
	}
	first := msg[:strings.IndexAny(msg+":", ".[:")]
	for _, f := range rs.Fields() {
		if f.Name() == first {
			return strings.Contains(msg, ": ")
		}
	}
	return false
}

// FuzzRegistryWire reads arbitrary record values the way the consumer
// does (decodeValue), through a registry that knows some ids. A value
// without the magic byte is left alone; one with it is Avro whose schema
// id is the big-endian number of bytes 1 to 4, and either decodes to JSON
// that encodes back to the same JSON, or is a *DecodeError of the kind its
// id calls for, one line, naming the schema id and, for a body that does
// not fit its schema, the path where it does not.
func FuzzRegistryWire(f *testing.F) {
	url := fakeRegistry(f)
	c, err := NewAvroCodec(SchemaRegistry{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	es := eventSchema(f)
	ps, err := parseAvroSchema(pathSchema)
	if err != nil {
		f.Fatal(err)
	}
	schemas := map[int]avro.Schema{1: es, 2: ps}
	demo, err := os.ReadFile("../../model/testdata/demo-event.json")
	if err != nil {
		f.Fatal(err)
	}
	body, err := jsonToAvro(es, demo)
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range [][]byte{
		wire(1, body), wire(1, body[:len(body)/3]), wire(1, append(bytes.Clone(body), 0)),
		wire(2, []byte{4, 0, 2, 2, 2, 'k', 2, 0}), wire(2, []byte{4, 0, 10}), wire(2, []byte{0, 2, 6, 'x', ' ', 'y', 14}),
		wire(3, body), wire(4, body), wire(5, body), wire(6, body), wire(1<<31, nil), wire(1<<32-1, []byte{1}),
		{0}, {0, 0, 0, 1}, {}, []byte(`{"eventId":"x"}`), {1, 0, 0, 0, 1},
	} {
		f.Add(v)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, value []byte) {
		r := &Record{Value: bytes.Clone(value)}
		c.decodeValue(ctx, r)
		if !isWire(value) {
			if r.Format == FormatAvro || r.DecodeErr != nil || r.Wire != nil || !bytes.Equal(r.Value, value) {
				t.Fatalf("a value without the magic byte was touched: %+v", r)
			}
			return
		}
		if r.Format != FormatAvro || !bytes.Equal(r.Wire, value) {
			t.Fatalf("a wire-format value not kept as Avro: %+v", r)
		}
		var de *DecodeError
		if r.DecodeErr != nil && !errors.As(r.DecodeErr, &de) {
			t.Fatalf("error %T %v is not a *DecodeError", r.DecodeErr, r.DecodeErr)
		}
		if len(value) < 5 {
			if de == nil || de.Kind != decodeBadHeader {
				t.Fatalf("a %d-byte value: %v, want a bad header", len(value), r.DecodeErr)
			}
			oneLineAvro(t, de.Error(), "has no 5-byte header")
			return
		}
		id := int(binary.BigEndian.Uint32(value[1:5]))
		if r.SchemaID != id {
			t.Fatalf("schema id %d read from % x", r.SchemaID, value[:5])
		}
		if de == nil {
			s := schemas[id]
			if s == nil {
				t.Fatalf("schema id %d decoded without a schema", id)
			}
			if !json.Valid(r.Value) {
				t.Fatalf("decoded to invalid JSON: %q", r.Value)
			}
			again, err := jsonToAvro(s, r.Value)
			if err != nil {
				t.Fatalf("decoded JSON does not encode: %v\n%s", err, r.Value)
			}
			out, err := avroToJSON(s, again)
			if err != nil || !bytes.Equal(out, r.Value) {
				t.Fatalf("re-encoded value decodes differently: %v\n%s\n%s", err, r.Value, out)
			}
			return
		}
		want := map[int]DecodeProblem{1: decodeBadBody, 2: decodeBadBody, 3: decodeBadSchema, 4: decodeBadSchema, 5: decodeRegistryDown}
		kind, known := want[id]
		if !known {
			kind = decodeUnknownSchema
		}
		if de.Kind != kind || de.SchemaID != id {
			t.Fatalf("schema id %d: %v (kind %d), want kind %d", id, de, de.Kind, kind)
		}
		msg := de.Error()
		oneLineAvro(t, msg, fmt.Sprintf("schema id %d", id))
		if kind == decodeBadBody {
			rest, ok := strings.CutPrefix(msg, fmt.Sprintf("avro: schema id %d: the body does not decode with its schema: ", id))
			if !ok || !pathOfSchema(schemas[id], rest) {
				t.Fatalf("a body that does not fit names no path: %q", msg)
			}
		}
	})
}

func oneLineAvro(t *testing.T, msg, want string) {
	t.Helper()
	if !strings.HasPrefix(msg, "avro: ") || strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, want) {
		t.Fatalf("error %q: want one line starting avro: and saying %q", msg, want)
	}
}
