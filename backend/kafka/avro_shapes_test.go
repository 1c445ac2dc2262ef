package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"engram/model"
)

// substrateShapes are the Kafka-bus fixtures of the newer event shapes
// (the Substrate's; CaseHub's events do not travel on the bus).
func substrateShapes(t *testing.T) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob("../../model/testdata/shapes/valid-*.json")
	out := map[string][]byte{}
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "casehub") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	if len(out) < 4 || out["valid-operational-signal.json"] == nil {
		t.Fatalf("substrate fixtures: %d", len(out))
	}
	return out
}

// schemaWithout is the built-in schema less the named top-level fields:
// an older version of it.
func schemaWithout(t *testing.T, names ...string) string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal([]byte(ExperienceEventSchema), &s); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, f := range s["fields"].([]any) {
		n := f.(map[string]any)["name"].(string)
		drop := false
		for _, d := range names {
			drop = drop || n == d
		}
		if !drop {
			kept = append(kept, f)
		}
	}
	s["fields"] = kept
	b, _ := json.Marshal(s)
	return string(b)
}

func sameEvent(t *testing.T, name string, got, want []byte) {
	t.Helper()
	g, err := model.Decode(got, model.DecodeOptions{})
	if err != nil {
		t.Fatalf("%s: decoding the Avro message's JSON: %v\n%s", name, err, got)
	}
	w, err := model.Decode(want, model.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate().Err(); err != nil {
		t.Fatalf("%s: the Avro message's event does not validate: %v", name, err)
	}
	// The events keep the bytes they arrived as, which differ in layout:
	// compare what engram makes of them.
	if gd, wd := model.NewIndexDoc(g, 0), model.NewIndexDoc(w, 0); !reflect.DeepEqual(gd, wd) {
		t.Fatalf("%s: the Avro message indexes as another document\n got: %+v\nwant: %+v", name, gd, wd)
	}
	if !reflect.DeepEqual(g.Signal(), w.Signal()) || !reflect.DeepEqual(g.Result.Blocks(), w.Result.Blocks()) {
		t.Fatalf("%s: signal or content blocks differ\n got: %+v %+v\nwant: %+v %+v", name, g.Signal(), g.Result.Blocks(), w.Signal(), w.Result.Blocks())
	}
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	sameJSON(t, gj, wj)
}

// Every Substrate shape (an OperationalSignal's subtype and payload, MCP
// content blocks with isError, system sources, a replacement) goes to the
// real broker as Avro under the built-in schema and comes back, through a
// consumer that fetches the schema from the real registry, as the event
// its JSON decodes to. The subject first holds the older schema (no
// subtype, no payload) under BACKWARD compatibility: the built-in one is
// accepted as its next version, messages written with the old one still
// read, and a change that is not backward compatible is refused with a
// message that says so.
func TestAvroRegistryShapesRoundTrip(t *testing.T) {
	regURL := testRegistry(t)
	cfg := testConfig(t)
	cfg.Topics.Audit = ""
	cfg.Registry = SchemaRegistry{URL: regURL}
	c := setup(t, cfg, 1, cfg.Topics.Raw)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	codec, err := NewAvroCodec(cfg.Registry)
	if err != nil {
		t.Fatal(err)
	}
	subject := cfg.Topics.Raw + "-value"
	t.Cleanup(func() {
		_, _ = codec.cl.DeleteSubject(context.Background(), subject, sr.SoftDelete)
		_, _ = codec.cl.DeleteSubject(context.Background(), subject, sr.HardDelete)
	})
	old, err := codec.Encoder(ctx, subject, schemaWithout(t, "subtype", "payload"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range codec.cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatBackward}, subject) {
		if r.Err != nil {
			t.Fatalf("setting BACKWARD on %s: %v", subject, r.Err)
		}
	}
	shapes := substrateShapes(t)
	if _, err := old.Encode(shapes["valid-operational-signal.json"]); err == nil || !strings.Contains(err.Error(), "payload: not in the Avro schema") {
		t.Fatalf("the old schema took an OperationalSignal: %v", err)
	}
	enc, err := codec.Encoder(ctx, subject, ExperienceEventSchema)
	if err != nil {
		t.Fatalf("the built-in schema as the next version under BACKWARD: %v", err)
	}
	if enc.ID == old.ID {
		t.Fatalf("the built-in schema got the old one's id %d", enc.ID)
	}
	incompatible := strings.Replace(ExperienceEventSchema,
		`{"name": "subtype", "type": ["null", "string"], "default": null,`, `{"name": "subtype", "type": "string",`, 1)
	if incompatible == ExperienceEventSchema {
		t.Fatal("the schema's subtype field moved: update the test")
	}
	if _, err := codec.Encoder(ctx, subject, incompatible); err == nil || !strings.Contains(err.Error(), "not compatible with what subject") {
		t.Fatalf("a required new field under BACKWARD: %v", err)
	}

	demo, err := os.ReadFile("../../model/testdata/demo-event.json")
	if err != nil {
		t.Fatal(err)
	}
	oldValue, err := old.Encode(demo)
	if err != nil {
		t.Fatal(err)
	}
	raws := []RawRecord{{Key: []byte("old-schema"), Value: oldValue}}
	for name, b := range shapes {
		v, err := enc.Encode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raws = append(raws, RawRecord{Key: []byte(name), Value: v})
	}
	if _, err := c.ProduceRaw(ctx, raws); err != nil {
		t.Fatal(err)
	}

	cons, err := NewConsumer(cfg, ConsumerOptions{}) // a codec of its own: every schema from the registry
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := map[string]*Record{}
	for len(got) < len(raws) {
		recs, err := cons.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		for _, r := range recs {
			got[string(r.Key)] = r
		}
	}
	for name, b := range shapes {
		r := got[name]
		if r.DecodeErr != nil || r.Format != FormatAvro || r.SchemaID != enc.ID {
			t.Fatalf("%s: %+v", name, r)
		}
		sameJSON(t, r.Value, b)
		sameEvent(t, name, r.Value, b)
	}
	if r := got["old-schema"]; r.DecodeErr != nil || r.SchemaID != old.ID {
		t.Fatalf("old schema: %+v", r)
	} else {
		sameJSON(t, r.Value, demo)
	}
}

// countingProxy is a reverse proxy in front of the real registry that
// counts the schema lookups by id it passes on.
type countingProxy struct {
	srv     *httptest.Server
	lookups sync.Map // path -> *atomic.Int32
}

var schemaByIDPath = regexp.MustCompile(`/schemas/ids/[0-9]+$`)

func newCountingProxy(t *testing.T, registry string) (*countingProxy, string) {
	t.Helper()
	u, err := url.Parse(registry)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && schemaByIDPath.MatchString(r.URL.Path) {
			n, _ := p.lookups.LoadOrStore(r.URL.Path, &atomic.Int32{})
			n.(*atomic.Int32).Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p, p.srv.URL + u.Path
}

func (p *countingProxy) count(path string) int {
	if n, ok := p.lookups.Load(path); ok {
		return int(n.(*atomic.Int32).Load())
	}
	return 0
}

// A schema is fetched from the registry once per id: many messages with
// one id, read one after another and at once from several goroutines,
// make one GET /schemas/ids/N; an id the registry does not know is asked
// for once while its answer is kept, not once per message.
func TestAvroRegistrySchemaCachedPerID(t *testing.T) {
	regURL := testRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	writer, err := NewAvroCodec(SchemaRegistry{URL: regURL})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := writer.Encoder(ctx, "engram-test-cache-value", ExperienceEventSchema)
	if err != nil {
		t.Fatal(err)
	}
	shapes := substrateShapes(t)
	var values [][]byte
	for _, b := range shapes {
		v, err := enc.Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}

	proxy, proxied := newCountingProxy(t, regURL)
	reader, err := NewAvroCodec(SchemaRegistry{URL: proxied})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(values))
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, v := range values {
				if _, id, err := reader.Decode(ctx, v); err != nil || id != enc.ID {
					errs <- fmt.Errorf("id %d: %w", id, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, v := range values {
		if _, _, err := reader.Decode(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	path := fmt.Sprintf("/schemas/ids/%d", enc.ID)
	if n := proxy.count(strings.TrimSuffix(mustPath(t, proxied), "/") + path); n != 1 {
		t.Fatalf("%d messages of schema id %d made %d registry lookups, want 1", 9*len(values), enc.ID, n)
	}

	unknown := wire(0x7ffffff1, values[0][5:])
	for range 3 {
		if _, _, err := reader.Decode(ctx, unknown); err == nil || !strings.Contains(err.Error(), "is unknown to the schema registry") {
			t.Fatalf("unknown id: %v", err)
		}
	}
	if n := proxy.count(strings.TrimSuffix(mustPath(t, proxied), "/") + "/schemas/ids/2147483633"); n != 1 {
		t.Fatalf("3 messages of an unknown id made %d registry lookups, want 1", n)
	}
}

func mustPath(t *testing.T, s string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}
