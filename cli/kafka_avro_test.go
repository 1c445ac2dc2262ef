package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/backend/kafka"
	"engram/ingest/gen"
	"engram/model"
)

// testRegistry is the real schema registry of .ci/services (Apicurio).
func testRegistry(t *testing.T) string {
	t.Helper()
	u := os.Getenv("ENGRAM_TEST_SCHEMA_REGISTRY_URL")
	if u == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_SCHEMA_REGISTRY_URL is not set")
		}
		t.Skip("set ENGRAM_TEST_SCHEMA_REGISTRY_URL (see .ci/services) to run against a real schema registry")
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(u + "/subjects")
	if err != nil {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatalf("the schema registry %s does not answer: %v", u, err)
		}
		t.Skipf("the schema registry %s does not answer: %v", u, err)
	}
	resp.Body.Close()
	return u
}

// The whole way through the real registry and broker: `engram produce
// --format avro` registers the schema and writes the wire format, `engram
// tail --topic` shows those messages decoded, and `engram worker` ingests
// Avro and JSON mixed on one topic into the index, while a message with a
// schema id the registry does not know goes to the rejected topic with its
// reason.
func TestWorkerIngestsAvroAndJSONMixed(t *testing.T) {
	cfg, kargs := testKafka(t)
	url := testRegistry(t)
	cfg.Group = fmt.Sprintf("engram-cli-avro-%08x", rand.Uint32())
	kargs = append(kargs, "--kafka-group", cfg.Group, "--kafka-schema-registry-url", url)
	cfg.Registry = kafka.SchemaRegistry{URL: url}

	// tail --topic raw, from before anything is produced.
	var tailOut, tailErr syncBuffer
	tctx, tcancel := context.WithCancel(context.Background())
	defer tcancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e := &env{strings.NewReader(""), &tailOut, &tailErr, func(string) string { return "" }}
		run(tctx, e, append([]string{"tail", "--topic", "raw", "--limit", "6"}, kargs...))
	}()
	time.Sleep(2 * time.Second) // the watch starts at the end of the topic

	g := gen.New(gen.Config{Seed: 17, Prefix: cfg.Group + "-"})
	var avroIn, jsonIn strings.Builder
	var avroIDs, jsonIDs []string
	for i := range 5 {
		line := g.Next()
		ev, err := model.Decode(line, model.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i < 3 {
			avroIn.Write(line)
			avroIn.WriteByte('\n')
			avroIDs = append(avroIDs, ev.EventID)
		} else {
			jsonIn.Write(line)
			jsonIn.WriteByte('\n')
			jsonIDs = append(jsonIDs, ev.EventID)
		}
	}
	c := newCLI(t)
	subject := cfg.Group + "-value"
	_, stderr, code := c.run(avroIn.String(), append([]string{"produce", "--format", "avro", "--subject", subject}, kargs...)...)
	if code != 0 || !strings.Contains(stderr, "produced 3 to") || !strings.Contains(stderr, "as Avro (subject "+subject+", schema id ") {
		t.Fatalf("produce --format avro: code %d, %s", code, stderr)
	}
	// A member the Avro schema has no field for is not produced (it would
	// be lost), and says so with its path.
	extra := strings.Replace(strings.SplitN(avroIn.String(), "\n", 2)[0], `{`, `{"surprise":1,`, 1)
	if _, stderr, code = c.run(extra+"\n", append([]string{"produce", "--format", "avro", "--subject", subject}, kargs...)...); code != 1 ||
		!strings.Contains(stderr, "not produced") || !strings.Contains(stderr, "surprise: not in the Avro schema") || !strings.Contains(stderr, "produced 0 to") {
		t.Fatalf("produce --format avro of an event the schema cannot hold: code %d, %s", code, stderr)
	}
	if _, stderr, code = c.run(jsonIn.String(), append([]string{"produce"}, kargs...)...); code != 0 || !strings.Contains(stderr, "produced 2 to") {
		t.Fatalf("produce: code %d, %s", code, stderr)
	}
	// A message whose schema id the registry does not know.
	client, err := kafka.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	unknown := append(binary.BigEndian.AppendUint32([]byte{0}, 0x7ffffff1), 2, 'x')
	if _, err := client.ProduceRaw(ctx, []kafka.RawRecord{{Key: []byte("unknown-schema"), Value: unknown}}); err != nil {
		t.Fatal(err)
	}

	// tail showed the Avro messages decoded.
	for deadline := time.Now().Add(30 * time.Second); strings.Count(tailOut.String(), "\n") < 6 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	tcancel()
	wg.Wait()
	avroLines, errLines := 0, 0
	for l := range strings.SplitSeq(strings.TrimSpace(tailOut.String()), "\n") {
		var m struct {
			Key, Format, Error string
			SchemaID           int
			Value              any
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("tail line %s: %v", l, err)
		}
		switch {
		case m.Format == "avro" && m.Error == "":
			v, _ := m.Value.(map[string]any)
			if v["eventId"] != m.Key || m.SchemaID == 0 {
				t.Errorf("tail showed an Avro message undecoded: %s", l)
			}
			avroLines++
		case m.Format == "avro":
			if !strings.Contains(m.Error, "unknown to the schema registry") {
				t.Errorf("tail: %s", l)
			}
			errLines++
		}
	}
	if avroLines != 3 || errLines != 1 {
		t.Fatalf("tail showed %d decoded Avro messages and %d errors, want 3 and 1:\n%s\n%s", avroLines, errLines, tailOut.String(), tailErr.String())
	}

	// The worker: all five ingested and announced, the unknown id rejected.
	watch, err := kafka.NewWatch(ctx, cfg, kafka.WatchOptions{Topics: []string{cfg.Topics.Indexed, cfg.Topics.Rejected}, From: kafka.FromStart})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	wctx, wcancel := context.WithCancel(context.Background())
	done, werr := startWorker(wctx, c.data, kargs)
	indexed := map[string]bool{}
	var rejected []*kafka.Record
	for len(indexed) < 5 || len(rejected) < 1 {
		recs, err := watch.Poll(ctx)
		if err != nil {
			wcancel()
			<-done
			t.Fatalf("indexed %v, rejected %d: %v\nworker: %s", indexed, len(rejected), err, werr.String())
		}
		for _, r := range recs {
			if r.Topic == cfg.Topics.Indexed {
				indexed[string(r.Key)] = true
			} else {
				rejected = append(rejected, r)
			}
		}
	}
	wcancel()
	<-done
	for _, id := range append(avroIDs, jsonIDs...) {
		if !indexed[id] {
			t.Errorf("%s was not indexed", id)
		}
	}
	r := rejected[0]
	var reason []string
	for _, h := range r.Headers {
		if h.Key == kafka.HeaderRejectReason {
			reason = append(reason, string(h.Value))
		}
	}
	if string(r.Key) != "unknown-schema" || string(r.Stored()) != string(unknown) || len(reason) != 1 ||
		!strings.Contains(reason[0], "schema id 2147483633 is unknown to the schema registry") {
		t.Fatalf("rejected %s with %q (% x)", r.Key, reason, r.Stored())
	}
	// The inspector's Topics view is told why the value is not shown decoded.
	if m := busMessage(r); m.Header("(avro error)") == "" || m.Header("(avro schema id)") != "2147483633" {
		t.Errorf("Topics view message: %+v", m.Headers)
	}
	if !strings.Contains(werr.String(), "; JSON, Avro through "+url) {
		t.Errorf("the worker's banner does not name the registry: %s", werr.String())
	}
	if !strings.Contains(werr.String(), "rejected 1") {
		t.Errorf("the worker's summary does not count the rejection: %s", werr.String())
	}
	// The Avro events are in the index as their JSON twins are.
	for _, id := range []string{avroIDs[0], jsonIDs[0]} {
		out, stderr, code := c.run("", "show", id)
		if code != 0 || !strings.Contains(out, id) {
			t.Errorf("show %s: code %d, %s %s", id, code, out, stderr)
		}
	}
}

// The registry's password is a secret: environment or file only, redacted
// by engram config, read from kafka.schema_registry_password_file.
func TestSchemaRegistrySettings(t *testing.T) {
	c := newCLI(t)
	c.env["KAFKA_SCHEMA_REGISTRY_URL"] = "http://127.0.0.1:1/apis/ccompat/v7"
	c.env["SCHEMA_REGISTRY_USERNAME"] = "engram"
	c.env["KAFKA_SCHEMA_REGISTRY_PASSWORD"] = knownSecret
	out, stderr, code := c.run("", "config")
	if code != 0 || strings.Contains(out+stderr, knownSecret) {
		t.Fatalf("config: code %d, secret printed or failed:\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"kafka.schema_registry_url", "http://127.0.0.1:1/apis/ccompat/v7", "kafka.schema_registry_username", "kafka.schema_registry_password", "<redacted>"} {
		if !strings.Contains(out, want) {
			t.Errorf("config does not show %q:\n%s", want, out)
		}
	}
	if _, stderr, code := c.run("", "config", "--kafka-schema-registry-password", "x"); code != 2 {
		t.Errorf("the password was accepted as a flag: %d %s", code, stderr)
	}
	delete(c.env, "KAFKA_SCHEMA_REGISTRY_PASSWORD")
	pw := t.TempDir() + "/pw"
	if err := os.WriteFile(pw, []byte(knownSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["ENGRAM_KAFKA_SCHEMA_REGISTRY_PASSWORD_FILE"] = pw
	out, _, _ = c.run("", "config")
	if strings.Contains(out, knownSecret) || !strings.Contains(out, "file "+pw) {
		t.Errorf("password file: %s", out)
	}
}
