package osindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

func TestCreateIndexMapping(t *testing.T) {
	name := testIndex(t)
	var l logs
	cfg := testConfig(t, name)
	cfg.Logf = l.logf
	ix := openTest(t, cfg)
	if knnCluster(t) && !ix.KNN() {
		t.Fatal("KNN() = false on a cluster with the k-NN plugin")
	}
	if !ix.KNN() {
		t.Skip("no k-NN plugin on the test cluster")
	}
	if !ix.VectorSearch() || ix.Dimension() != 8 {
		t.Errorf("VectorSearch %v Dimension %d, want true 8", ix.VectorSearch(), ix.Dimension())
	}
	if !strings.Contains(l.String(), "created index "+name) {
		t.Errorf("no creation note in the log:\n%s", l.String())
	}
	props := mapping(t, name)
	emb := props["embedding"]
	method, _ := emb["method"].(map[string]any)
	params, _ := method["parameters"].(map[string]any)
	if emb["type"] != "knn_vector" || emb["dimension"] != 8.0 || method["engine"] != "lucene" ||
		method["name"] != "hnsw" || method["space_type"] != "l2" || params["m"] != 16.0 || params["ef_construction"] != 128.0 {
		t.Errorf("embedding mapping: %s", jsonOf(t, emb))
	}
	want := map[string]string{
		"turn_id": "keyword", "tenant_id": "keyword", "trace_id": "keyword", "tool": "keyword",
		"success": "boolean", "latency_ms": "long", "ingested_at": "date",
		"event_id": "keyword", "timestamp": "date", "event_type": "keyword", "session_id": "keyword",
		"user_id": "keyword", "agent_id": "keyword", "summary": "text", "importance_score": "float",
		"reward_score": "float", "confidence": "float", "retrieval_count": "integer", "decay_factor": "float",
		"object_storage_key": "keyword", "tags": "keyword", "retrieval_priority": "float", "reinforcement_score": "float",
	}
	for f, typ := range want {
		if got := fieldType(props[f]); got != typ {
			t.Errorf("%s: type %q, want %q", f, got, typ)
		}
	}
	if props["summary"]["analyzer"] != "english" {
		t.Errorf("summary: %v", props["summary"])
	}
	if _, ok := props["structured"]; !ok {
		t.Error("no structured field")
	}
	s := settings(t, name)
	for k, v := range map[string]string{
		"index.knn": "true", "index.number_of_shards": "1", "index.number_of_replicas": "0",
		"index.knn.algo_param.ef_search": "100",
	} {
		if s[k] != v {
			t.Errorf("setting %s = %v, want %s", k, s[k], v)
		}
	}
	if got, want := ix.Describe(), "opensearch "+strings.TrimRight(osURL(t), "/")+"/"+name; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	if ix.Name() != name || ix.Client() == nil {
		t.Errorf("Name %q Client %v", ix.Name(), ix.Client())
	}

	// A second Open of the same index changes nothing.
	var l2 logs
	cfg.Logf = l2.logf
	openTest(t, cfg)
	if strings.Contains(l2.String(), "added") || strings.Contains(l2.String(), "created") {
		t.Errorf("second Open changed the index:\n%s", l2.String())
	}
	if got := mapping(t, name); !reflect.DeepEqual(got, props) {
		t.Errorf("second Open changed the mapping:\n%s", jsonOf(t, got))
	}
}

func TestWriteGetRoundTrip(t *testing.T) {
	ix := openTest(t, testConfig(t, testIndex(t)))
	ctx := context.Background()

	demo, err := os.ReadFile("../../model/testdata/demo-event.json")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := model.Decode(demo, model.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev.Input.Embedding = model.StubEmbedding(ev.Input.Text, 8)
	ev.ImportanceScore = model.Importance(ev)
	ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
	fromEvent := model.NewIndexDoc(ev, 0)

	noEmbedding := testDoc("no-embedding")
	noEmbedding.Embedding = []float64{}
	noEmbedding.Success = ptr(false)
	noEmbedding.LatencyMs = ptr(int64(0))
	unicode := testDoc("id with spaces/and slash é 😀")
	unicode.Summary = "résumé 😀 \"quoted\" \\ back\nslash"
	unicode.Tags = []string{}

	docs := []*model.IndexDoc{testDoc("full"), fromEvent, sourceDoc("source-shaped"), noEmbedding, unicode}
	before := time.Now().UTC().Add(-time.Second)
	res := ix.Write(ctx, docs)
	for i, r := range res {
		if r.Err != nil || !r.Created {
			t.Fatalf("doc %d (%s): created=%v err=%v", i, docs[i].EventID, r.Created, r.Err)
		}
	}
	for _, d := range docs {
		at, err := time.Parse(time.RFC3339, d.IngestedAt)
		if err != nil || len(d.IngestedAt) != len(ingestedAtLayout) || at.Before(before) || at.After(time.Now().Add(time.Second)) {
			t.Errorf("%s: IngestedAt %q", d.EventID, d.IngestedAt)
		}
		got, err := ix.Get(ctx, d.EventID)
		if err != nil {
			t.Fatalf("Get(%s): %v", d.EventID, err)
		}
		if a, b := jsonOf(t, d), jsonOf(t, got); a != b {
			t.Errorf("%s: read back\n%s\nwant\n%s", d.EventID, b, a)
		}
	}
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.Count(ctx); err != nil || n != int64(len(docs)) {
		t.Errorf("Count = %d, %v; want %d", n, err, len(docs))
	}

	if _, err := ix.Get(ctx, "never-written"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Get of a missing id: %v, want backend.ErrNotFound", err)
	}
	// A missing index is not a missing document.
	admin(t, osURL(t), "DELETE", "/"+ix.Name(), "")
	if _, err := ix.Get(ctx, "full"); err == nil || errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "index_not_found_exception") {
		t.Errorf("Get on a deleted index: %v", err)
	}
}

func TestDuplicateID(t *testing.T) {
	ix := openTest(t, testConfig(t, testIndex(t)))
	ctx := context.Background()
	orig := testDoc("dup")
	mustWrite(t, ix, orig)
	stored := jsonOf(t, orig)

	again := testDoc("dup")
	again.Summary = "a different summary"
	again.IngestedAt = ""
	other := testDoc("new")
	res := ix.Write(ctx, []*model.IndexDoc{again, other})
	if res[0].Err != nil || res[0].Created {
		t.Errorf("duplicate: created=%v err=%v, want false <nil>", res[0].Created, res[0].Err)
	}
	if res[1].Err != nil || !res[1].Created {
		t.Errorf("new doc in the same batch: %+v", res[1])
	}
	if again.IngestedAt != "" {
		t.Errorf("the duplicate's IngestedAt was set to %q", again.IngestedAt)
	}
	got, err := ix.Get(ctx, "dup")
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, got) != stored {
		t.Errorf("stored document changed:\n%s\nwant\n%s", jsonOf(t, got), stored)
	}

	// The same id twice in one batch: the first is created, the second not.
	res = ix.Write(ctx, []*model.IndexDoc{testDoc("twice"), testDoc("twice")})
	if !res[0].Created || res[0].Err != nil || res[1].Created || res[1].Err != nil {
		t.Errorf("same id twice in a batch: %+v", res)
	}
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.Count(ctx); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
}

func TestItemMappingConflict(t *testing.T) {
	name := testIndex(t)
	// An index someone else made, where latency_ms is a boolean.
	mustAdmin(t, osURL(t), "PUT", "/"+name, `{"settings":{"number_of_shards":1,"number_of_replicas":0},
		"mappings":{"properties":{"latency_ms":{"type":"boolean"},"event_id":{"type":"keyword"}}}}`)
	var l logs
	cfg := testConfig(t, name)
	cfg.Logf = l.logf
	ix := openTest(t, cfg)
	if !strings.Contains(l.String(), "maps latency_ms as boolean, engram writes long") {
		t.Errorf("no warning about latency_ms:\n%s", l.String())
	}
	if got := fieldType(mapping(t, name)["latency_ms"]); got != "boolean" {
		t.Errorf("latency_ms changed to %s", got)
	}
	docs := []*model.IndexDoc{testDoc("a"), testDoc("b"), testDoc("c")}
	docs[0].LatencyMs, docs[2].LatencyMs = nil, nil
	res := ix.Write(context.Background(), docs)
	if res[0].Err != nil || !res[0].Created || res[2].Err != nil || !res[2].Created {
		t.Errorf("the other documents: %+v %+v", res[0], res[2])
	}
	var ie *ItemError
	if res[1].Created || !errors.As(res[1].Err, &ie) {
		t.Fatalf("conflicting document: created=%v err=%v", res[1].Created, res[1].Err)
	}
	msg := res[1].Err.Error()
	if ie.Status != 400 || ie.Type() != "mapper_parsing_exception" || ie.ID != "b" ||
		!strings.Contains(msg, "latency_ms") || !strings.Contains(msg, "boolean") || strings.Contains(msg, "\n") {
		t.Errorf("item error: %+v\n%s", ie, msg)
	}
	if IsTransient(res[1].Err) {
		t.Error("a mapping conflict is not transient")
	}
	t.Logf("item error: %s", msg)
	if docs[1].IngestedAt != "" {
		t.Error("IngestedAt set on a failed document")
	}
}

// sourceSystemIndex creates an index as the source system does
// (docs/data-contract.md, The index document), with 1 shard and 0 replicas, faiss where the test node can
// run it and lucene otherwise.
func sourceSystemIndex(t *testing.T, name string, dim int) (engine string) {
	engine = "lucene"
	if os.Getenv("ENGRAM_TEST_OPENSEARCH_KNN_FAISS") == "1" {
		// Only where the node has faiss's native library: writing to a faiss
		// index without it kills the node (UnsatisfiedLinkError).
		engine = "faiss"
	}
	vec := func(d int) string {
		return fmt.Sprintf(`{"type":"knn_vector","dimension":%d,"method":{"name":"hnsw","engine":%q,"space_type":"l2","parameters":{"m":16,"ef_construction":128}}}`, d, engine)
	}
	body := `{"settings":{"index":{"knn":true,"number_of_shards":1,"number_of_replicas":0,"knn.algo_param.ef_search":100}},
	"mappings":{"properties":{
		"event_id":{"type":"keyword"},"timestamp":{"type":"date"},"event_type":{"type":"keyword"},
		"session_id":{"type":"keyword"},"user_id":{"type":"keyword"},"agent_id":{"type":"keyword"},
		"summary":{"type":"text","analyzer":"english"},
		"embedding":` + vec(dim) + `,
		"embedding_qwen":` + vec(1024) + `,"embedding_nomic":` + vec(768) + `,"embedding_bge_m3":` + vec(1024) + `,
		"embedding_meta":{"type":"object","properties":{"model":{"type":"keyword"}}},
		"structured":{"type":"object"},
		"importance_score":{"type":"float"},"reward_score":{"type":"float"},"confidence":{"type":"float"},
		"retrieval_count":{"type":"integer"},"decay_factor":{"type":"float"},
		"object_storage_key":{"type":"keyword"},"tags":{"type":"keyword"},
		"retrieval_priority":{"type":"float"},"reinforcement_score":{"type":"float"}}}}`
	mustAdmin(t, osURL(t), "PUT", "/"+name, body)
	return engine
}

func TestSourceSystemIndex(t *testing.T) {
	name := testIndex(t)
	if !knnCluster(t) {
		t.Skip("ENGRAM_TEST_OPENSEARCH_KNN is not 1: the test cluster has no k-NN plugin for the source system's mapping")
	}
	engine := sourceSystemIndex(t, name, 8)
	t.Logf("source-system index with engine %s", engine)
	before := mapping(t, name)
	settingsBefore := settings(t, name)

	var l logs
	cfg := testConfig(t, name)
	cfg.Logf = l.logf
	ix := openTest(t, cfg)
	if !strings.Contains(l.String(), "added fields ingested_at, latency_ms, source, success, tenant_id, tool, trace_id, turn_id") {
		t.Errorf("log:\n%s", l.String())
	}
	after := mapping(t, name)
	for f, def := range before {
		if !reflect.DeepEqual(after[f], def) {
			t.Errorf("%s changed: %v -> %v", f, def, after[f])
		}
	}
	for f, def := range ExtensionFields() {
		if !reflect.DeepEqual(after[f], def) {
			t.Errorf("extension %s: %v, want %v", f, after[f], def)
		}
	}
	if len(after) != len(before)+len(ExtensionFields()) {
		t.Errorf("%d fields after, %d before", len(after), len(before))
	}
	settingsAfter := settings(t, name)
	for _, k := range []string{"index.knn", "index.number_of_shards", "index.number_of_replicas", "index.knn.algo_param.ef_search"} {
		if settingsAfter[k] != settingsBefore[k] {
			t.Errorf("setting %s: %v -> %v", k, settingsBefore[k], settingsAfter[k])
		}
	}
	if !ix.VectorSearch() || ix.Dimension() != 8 {
		t.Errorf("VectorSearch %v Dimension %d", ix.VectorSearch(), ix.Dimension())
	}

	ctx := context.Background()
	// A document shaped as the source system's, written by engram.
	d := sourceDoc("source-1")
	mustWrite(t, ix, d)
	got, err := ix.Get(ctx, d.EventID)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := jsonOf(t, d), jsonOf(t, got); a != b {
		t.Errorf("read back\n%s\nwant\n%s", b, a)
	}
	// One written by the source system itself (profile vectors, no
	// extension fields, no ingested_at), read by engram.
	raw := `{"event_id":"source-2","timestamp":"2026-05-08T22:31:25.237Z","event_type":"tool_result",
		"session_id":"s9","user_id":"u9","summary":"tool answered","embedding":[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8],
		"embedding_nomic":null,"embedding_meta":{"model":"nomic"},"structured":{},"importance_score":0.5,
		"reward_score":0.5,"confidence":0.5,"retrieval_count":3,"decay_factor":0.9,"retrieval_priority":0.2,
		"reinforcement_score":0.1,"object_storage_key":"events/2026/05/08/source-2.json","tags":[]}`
	mustAdmin(t, osURL(t), "PUT", "/"+name+"/_doc/source-2", raw)
	got, err = ix.Get(ctx, "source-2")
	if err != nil {
		t.Fatal(err)
	}
	want := &model.IndexDoc{EventID: "source-2", Timestamp: "2026-05-08T22:31:25.237Z", EventType: "tool_result",
		SessionID: "s9", UserID: "u9", Summary: "tool answered", Embedding: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8},
		Structured: json.RawMessage(`{}`), ImportanceScore: 0.5, RewardScore: 0.5, Confidence: 0.5, RetrievalCount: 3,
		DecayFactor: 0.9, ObjectStorageKey: "events/2026/05/08/source-2.json", Tags: []string{}}
	if a, b := jsonOf(t, want), jsonOf(t, got); a != b {
		t.Errorf("source-system doc read back\n%s\nwant\n%s", b, a)
	}
	if got.TurnKey() != "source-2" {
		t.Errorf("TurnKey %q", got.TurnKey())
	}
	// Writing it again from engram is a duplicate, not a second document.
	res := ix.Write(ctx, []*model.IndexDoc{sourceDoc("source-2")})
	if res[0].Err != nil || res[0].Created {
		t.Errorf("rewrite of a source-system doc: %+v", res[0])
	}

	// An embedder of another dimension is refused at Open.
	cfg.Dimension = 16
	_, err = Open(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "dimension 8, the embedder gives 16") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open with dimension 16: %v", err)
	}
}

func TestBatchSplit(t *testing.T) {
	ix := openTest(t, testConfig(t, testIndex(t)))
	ctx := context.Background()
	mustWrite(t, ix, testDoc("doc-02"), testDoc("doc-07"))
	for _, tc := range []struct {
		name      string
		docs, siz int
		wantReqs  int64
	}{
		{"docs=3", 3, 0, 3},             // 10 docs, one fails locally: 9 sent as 3+3+3
		{"bytes=1500", 0, 1500, 0},      // a few docs per request
		{"bytes=1 (one each)", 0, 1, 9}, // a document larger than the bound goes alone
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix.cfg.BatchDocs, ix.cfg.BatchBytes = tc.docs, tc.siz
			if tc.docs == 0 {
				ix.cfg.BatchDocs = defaultBatchDocs
			}
			if tc.siz == 0 {
				ix.cfg.BatchBytes = defaultBatchBytes
			}
			prefix := strings.ReplaceAll(strings.Fields(tc.name)[0], "=", "")
			var docs []*model.IndexDoc
			for i := range 10 {
				id := fmt.Sprintf("doc-%02d", i)
				if i != 2 && i != 7 {
					id = prefix + "-" + id
				}
				docs = append(docs, testDoc(id))
			}
			docs[4].EventID = "" // fails before sending
			n0 := ix.bulkRequests.Load()
			res := ix.Write(ctx, docs)
			if len(res) != len(docs) {
				t.Fatalf("%d results for %d docs", len(res), len(docs))
			}
			for i, r := range res {
				switch i {
				case 2, 7:
					if r.Created || r.Err != nil {
						t.Errorf("doc %d (existing): %+v", i, r)
					}
				case 4:
					if r.Err == nil || !strings.Contains(r.Err.Error(), "without event_id") {
						t.Errorf("doc 4 (no id): %+v", r)
					}
				default:
					if !r.Created || r.Err != nil {
						t.Errorf("doc %d: %+v", i, r)
					}
					if got, err := ix.Get(ctx, docs[i].EventID); err != nil || got.EventID != docs[i].EventID {
						t.Errorf("doc %d read back: %v %v", i, got, err)
					}
				}
			}
			reqs := ix.bulkRequests.Load() - n0
			if tc.wantReqs > 0 && reqs != tc.wantReqs {
				t.Errorf("%d bulk requests, want %d", reqs, tc.wantReqs)
			}
			if tc.wantReqs == 0 && (reqs < 2 || reqs > 8) {
				t.Errorf("%d bulk requests for 9 docs of ~700 bytes in 1500-byte batches", reqs)
			}
			t.Logf("%d bulk requests", reqs)
		})
	}
}

func TestRefreshPolicy(t *testing.T) {
	cfg := testConfig(t, testIndex(t))
	cfg.Refresh = "wait_for"
	ix := openTest(t, cfg)
	mustWrite(t, ix, testDoc("r1"), testDoc("r2"))
	// wait_for returns once the documents are searchable.
	if n, err := ix.Count(context.Background()); err != nil || n != 2 {
		t.Errorf("Count right after a wait_for write = %d, %v", n, err)
	}
	cfg.Refresh = "sometimes"
	if _, err := Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "wait_for") {
		t.Errorf("bad refresh: %v", err)
	}
}

func TestNoKNN(t *testing.T) {
	name := testIndex(t)
	var l logs
	cfg := testConfig(t, name)
	cfg.AssumeNoKNN = true
	cfg.Dimension = 0 // not needed without k-NN
	cfg.Logf = l.logf
	ix := openTest(t, cfg)
	if ix.KNN() || ix.VectorSearch() || ix.Dimension() != 0 {
		t.Errorf("KNN %v VectorSearch %v Dimension %d", ix.KNN(), ix.VectorSearch(), ix.Dimension())
	}
	if !strings.Contains(l.String(), "no k-NN plugin") {
		t.Errorf("log:\n%s", l.String())
	}
	emb := mapping(t, name)["embedding"]
	if emb["type"] != "float" || emb["index"] != false || emb["doc_values"] != false {
		t.Errorf("embedding mapping without k-NN: %v", emb)
	}
	if s := settings(t, name); s["index.knn"] != nil {
		t.Errorf("index.knn = %v", s["index.knn"])
	}
	d := testDoc("vec")
	d.Embedding = make([]float64, 1536) // any dimension: nothing checks it
	for i := range d.Embedding {
		d.Embedding[i] = float64(i) / 1536
	}
	mustWrite(t, ix, d, testDoc("short"))
	got, err := ix.Get(context.Background(), "vec")
	if err != nil || jsonOf(t, got) != jsonOf(t, d) {
		t.Errorf("read back: %v", err)
	}
}

func TestConcurrentCreate(t *testing.T) {
	name := testIndex(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			ix, err := Open(context.Background(), testConfig(t, name))
			if err == nil {
				ix.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	if fieldType(mapping(t, name)["ingested_at"]) != "date" {
		t.Error("index incomplete")
	}
}

func tlsConfig(t *testing.T) Config {
	u := service(t, "ENGRAM_TEST_OPENSEARCH_TLS_URL")
	return Config{
		URLs:      []string{u},
		Username:  service(t, "ENGRAM_TEST_OPENSEARCH_USERNAME"),
		Password:  service(t, "ENGRAM_TEST_OPENSEARCH_PASSWORD"),
		CAFile:    service(t, "ENGRAM_TEST_OPENSEARCH_CA_FILE"),
		Dimension: 8,
		Timeout:   20 * time.Second,
		Logf:      t.Logf,
	}
}

func TestTLSBasicAuth(t *testing.T) {
	cfg := tlsConfig(t)
	cfg.Index = testIndex(t)
	ctx := context.Background()

	ix := openTest(t, cfg)
	d := testDoc("tls")
	mustWrite(t, ix, d)
	got, err := ix.Get(ctx, "tls")
	if err != nil || jsonOf(t, got) != jsonOf(t, d) {
		t.Fatalf("read back over TLS: %v", err)
	}
	if strings.Contains(cfg.Redacted(), cfg.Password) || strings.Contains(ix.Describe(), cfg.Password) {
		t.Error("password shown")
	}

	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"no CA", func(c *Config) { c.CAFile = "" }, []string{cfg.URLs[0], "unknown authority", "--opensearch-ca"}},
		{"wrong password", func(c *Config) { c.Password = "wrong" }, []string{cfg.URLs[0], "401", "check OPENSEARCH_USERNAME/PASSWORD"}},
		{"no credentials", func(c *Config) { c.Username, c.Password = "", "" }, []string{cfg.URLs[0], "401", "OPENSEARCH_USERNAME/OPENSEARCH_PASSWORD"}},
		{"plain http to the TLS port", func(c *Config) { c.URLs = []string{strings.Replace(c.URLs[0], "https:", "http:", 1)} }, []string{"https://"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			tc.edit(&c)
			start := time.Now()
			ix, err := Open(ctx, c)
			if err == nil {
				ix.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			t.Logf("%s (%s)", msg, time.Since(start).Round(time.Millisecond))
			if strings.Contains(msg, "\n") {
				t.Errorf("not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, cfg.Password) {
				t.Error("password in the message")
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = Open(context.Background(), Config{URLs: []string{u}, Dimension: 8, Timeout: 10 * time.Second})
	if err == nil {
		t.Fatal("Open succeeded")
	}
	msg := err.Error()
	t.Logf("%s (%s)", msg, time.Since(start).Round(time.Millisecond))
	if want := "connection refused: is OpenSearch running at " + u + "?"; !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("%q, want one line with %q", msg, want)
	}
	if !IsTransient(err) {
		t.Error("connection refused is transient")
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

func TestClosed(t *testing.T) {
	ix := openTest(t, testConfig(t, testIndex(t)))
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	res := ix.Write(context.Background(), []*model.IndexDoc{testDoc("x")})
	if !errors.Is(res[0].Err, backend.ErrClosed) {
		t.Errorf("Write after Close: %+v", res[0])
	}
	if _, err := ix.Get(context.Background(), "x"); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	ix := openTest(t, testConfig(t, testIndex(t)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := ix.Write(ctx, []*model.IndexDoc{testDoc("x"), testDoc("y")})
	for _, r := range res {
		if r.Created || !errors.Is(r.Err, context.Canceled) || IsTransient(r.Err) {
			t.Errorf("%+v", r)
		}
	}
}

var _ ingest.Index = (*Index)(nil)

// TestStructuredShapes: free-form structured content whose shapes
// contradict each other is rejected per document with the default object
// mapping, and accepted with flat_object.
func TestStructuredShapes(t *testing.T) {
	for _, typ := range []string{"object", "flat_object"} {
		t.Run(typ, func(t *testing.T) {
			name := testIndex(t)
			cfg := testConfig(t, name)
			cfg.StructuredType = typ
			ix := openTest(t, cfg)
			if got := fieldType(mapping(t, name)["structured"]); got != typ {
				t.Errorf("structured mapped as %q", got)
			}
			a, b, c := testDoc("a"), testDoc("b"), testDoc("c")
			a.Structured = json.RawMessage(`{"subject":"the user's question"}`)
			b.Structured = json.RawMessage(`{"subject":{"kind":"file","path":"/tmp/x"}}`)
			c.Structured = json.RawMessage(`{"mixed":[1,"two",{"three":3}]}`)
			mustWrite(t, ix, a)
			res := ix.Write(context.Background(), []*model.IndexDoc{b, c})
			for i, r := range res {
				if typ == "flat_object" {
					if !r.Created || r.Err != nil {
						t.Errorf("doc %d: %+v", i, r)
					}
					continue
				}
				var ie *ItemError
				if r.Created || !errors.As(r.Err, &ie) || ie.Status != 400 {
					t.Errorf("doc %d: %+v", i, r)
				} else {
					t.Logf("doc %d: %v", i, r.Err)
				}
			}
			if typ == "flat_object" {
				got, err := ix.Get(context.Background(), "c")
				if err != nil || string(got.Structured) != string(c.Structured) {
					t.Errorf("read back %s, %v", got.Structured, err)
				}
			}
		})
	}
}

// A reader never creates an index: a mistyped name is said not to exist,
// with the names that do, and the cluster is left as it was.
func TestReadOnlyNeverCreates(t *testing.T) {
	existing := testIndex(t)
	openTest(t, testConfig(t, existing)) // a writer creates it
	missing := testIndex(t)
	cfg := testConfig(t, missing)
	cfg.ReadOnly = true
	ix, err := Open(context.Background(), cfg)
	if err == nil {
		ix.Close()
		t.Fatalf("opening missing index %s read-only succeeded", missing)
	}
	if msg := err.Error(); !strings.Contains(msg, "index "+missing+" does not exist") || !strings.Contains(msg, existing) {
		t.Errorf("want %q not existing, with %s among the existing, got: %v", missing, existing, err)
	}
	if status, _ := admin(t, osURL(t), "HEAD", "/"+missing, ""); status != 404 {
		t.Errorf("HEAD /%s = %d after a read-only open: the reader created it", missing, status)
	}
	cfg = testConfig(t, existing)
	cfg.ReadOnly = true
	openTest(t, cfg)
}
