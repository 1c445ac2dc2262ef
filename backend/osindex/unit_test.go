package osindex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"engram/backend"
	"engram/model"
)

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENSEARCH_URL":      " https://a:9200 ,https://b:9200,, ",
		"OPENSEARCH_USERNAME": "engram",
		"OPENSEARCH_PASSWORD": "s3cret-pw",
	}
	cfg := configFromEnv(func(k string) string { return env[k] })
	if !reflect.DeepEqual(cfg.URLs, []string{"https://a:9200", "https://b:9200"}) || cfg.Username != "engram" || cfg.Password != "s3cret-pw" {
		t.Errorf("%+v", cfg)
	}
	if cfg := configFromEnv(func(string) string { return "" }); cfg.URLs != nil {
		t.Errorf("no URL: %+v", cfg)
	}
}

func TestRedacted(t *testing.T) {
	cfg := Config{
		URLs:     []string{"https://admin:url-pw@a:9200", "https://b:9200"},
		Username: "engram", Password: "s3cret-pw", CAFile: "/etc/ca.pem", Dimension: 8,
	}
	r := cfg.Redacted()
	for _, secret := range []string{"s3cret-pw", "url-pw"} {
		if strings.Contains(r, secret) {
			t.Errorf("%q shows a password", r)
		}
	}
	for _, want := range []string{"https://admin:xxxxx@a:9200", "https://b:9200", `user="engram"`, "password=set", "ca=/etc/ca.pem", "index=experience_events", "dim=8"} {
		if !strings.Contains(r, want) {
			t.Errorf("%q lacks %q", r, want)
		}
	}
	cfg.Password = ""
	if r := cfg.Redacted(); !strings.Contains(r, "password=unset") {
		t.Errorf("%q", r)
	}
	if s := redactURL("http://u:p%zz@h"); strings.Contains(s, "p%zz") {
		t.Errorf("unparsable URL: %q", s)
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := Config{URLs: []string{"http://h:9200"}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Index != model.IndexName || cfg.KNNEngine != "lucene" || cfg.SpaceType != "l2" || cfg.Refresh != "false" ||
		cfg.BatchDocs != 500 || cfg.BatchBytes != 5<<20 || cfg.Shards != 1 || cfg.Replicas != 0 || cfg.Timeout != defaultTimeout ||
		cfg.StructuredType != "object" || cfg.Logf == nil {
		t.Errorf("%+v", cfg)
	}
	for _, bad := range []Config{
		{},
		{URLs: []string{"h:9200"}},
		{URLs: []string{"ftp://h"}},
		{URLs: []string{"http://h"}, Refresh: "yes"},
		{URLs: []string{"http://h"}, StructuredType: "nested"},
	} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestIndexDefinition(t *testing.T) {
	cfg, _ := Config{URLs: []string{"http://h"}, Dimension: 1536}.withDefaults()
	def := indexDefinition(cfg, true)
	b, _ := json.Marshal(def)
	var got struct {
		Settings struct {
			Index map[string]any `json:"index"`
		} `json:"settings"`
		Mappings struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if s := got.Settings.Index; s["knn"] != true || s["knn.algo_param.ef_search"] != 100.0 || s["number_of_shards"] != 1.0 || s["number_of_replicas"] != 0.0 {
		t.Errorf("settings %v", s)
	}
	wantEmb := `{"dimension":1536,"method":{"engine":"lucene","name":"hnsw","parameters":{"ef_construction":128,"m":16},"space_type":"l2"},"type":"knn_vector"}`
	if e, _ := json.Marshal(got.Mappings.Properties["embedding"]); string(e) != wantEmb {
		t.Errorf("embedding %s", e)
	}
	// The other common model size, and the engines with native libraries:
	// only the dimension and the engine change.
	for _, c := range []struct {
		dim    int
		engine string
	}{{768, ""}, {768, "faiss"}, {1536, "faiss"}, {1536, "nmslib"}} {
		cfg, _ := Config{URLs: []string{"http://h"}, Dimension: c.dim, KNNEngine: c.engine}.withDefaults()
		want := fmt.Sprintf(`{"dimension":%d,"method":{"engine":"%s","name":"hnsw","parameters":{"ef_construction":128,"m":16},"space_type":"l2"},"type":"knn_vector"}`, c.dim, cfg.KNNEngine)
		if e, _ := json.Marshal(indexDefinition(cfg, true)["mappings"].(map[string]any)["properties"].(map[string]any)["embedding"]); string(e) != want {
			t.Errorf("embedding at %d, %s: %s", c.dim, c.engine, e)
		}
	}

	// Without the k-NN plugin: no knn settings, embedding only stored.
	cfg.Shards, cfg.Replicas = 3, 1
	b, _ = json.Marshal(indexDefinition(cfg, false))
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	got.Settings.Index = nil
	got.Mappings.Properties = nil
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if s := got.Settings.Index; s["knn"] != nil || s["knn.algo_param.ef_search"] != nil || s["number_of_shards"] != 3.0 || s["number_of_replicas"] != 1.0 {
		t.Errorf("settings without knn %v", s)
	}
	if e, _ := json.Marshal(got.Mappings.Properties["embedding"]); string(e) != `{"doc_values":false,"index":false,"type":"float"}` {
		t.Errorf("embedding without knn %s", e)
	}
	for f, def := range ExtensionFields() {
		if !reflect.DeepEqual(map[string]any(got.Mappings.Properties[f]), def) {
			t.Errorf("%s: %v", f, got.Mappings.Properties[f])
		}
	}
	if p := got.Mappings.Properties["summary"]; p["analyzer"] != "english" || p["type"] != "text" {
		t.Errorf("summary %v", p)
	}
}

func TestStatusErrorParsing(t *testing.T) {
	e := statusError("bulk x", 400, []byte(`{"error":{"root_cause":[],"type":"illegal_argument_exception","reason":"bad\nthing","caused_by":{"type":"x_exception","reason":"deeper"}},"status":400}`))
	if e.Type() != "illegal_argument_exception" || e.Error() != "opensearch: bulk x: 400 Bad Request: illegal_argument_exception: bad thing (caused by x_exception: deeper)" {
		t.Errorf("%q", e.Error())
	}
	e = statusError("GET /", 401, []byte("<html><head><title>401 Authorization Required</title></head>\n<body>nginx</body></html>"))
	if e.Cause != nil || strings.Contains(e.Error(), "<") || strings.Contains(e.Error(), "\n") || e.detail() != "" {
		t.Errorf("%q", e.Error())
	}
	e = statusError("GET /", 429, []byte(`{"error":"too many","status":429}`))
	if e.Cause == nil || e.Cause.Reason != "too many" || !IsTransient(e) {
		t.Errorf("%+v", e)
	}
}

func TestIsTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&StatusError{Status: 429}, true},
		{&StatusError{Status: 500}, true},
		{&StatusError{Status: 503}, true},
		{&StatusError{Status: 501}, false},
		{&StatusError{Status: 400}, false},
		{&StatusError{Status: 401}, false},
		{&StatusError{Status: 404}, false},
		{fmt.Errorf("bulk: %w", &ItemError{Status: 429, Cause: Cause{Type: "es_rejected_execution_exception"}}), true},
		{&ItemError{Status: 400, Cause: Cause{Type: "mapper_parsing_exception"}}, false},
		{fmt.Errorf("x: %w", &net.OpError{Op: "dial", Err: &net.OpError{Err: syscall.ECONNREFUSED}}), true},
		{fmt.Errorf("x: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("x: %w", io.ErrUnexpectedEOF), true},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
		{fmt.Errorf("not sent: %w", context.Canceled), false},
		{&net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}, false},
		{&net.DNSError{Err: "timeout", Name: "h", IsTimeout: true}, true},
		{errors.New("opensearch: document without event_id"), false},
		{backend.ErrNotFound, false},
		{&OpenError{Err: syscall.ECONNREFUSED}, true},
		// net/http's own words when the server closed a kept-alive
		// connection under a POST (seen when the test cluster went away).
		{&url.Error{Op: "Post", URL: "http://h/_msearch", Err: errors.New("http: server closed idle connection")}, true},
	} {
		if got := IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%v) = %v", tc.err, got)
		}
	}
}

// fake is a minimal OpenSearch: enough for Open, and a _bulk answered by
// bulk.
type fake struct {
	plugins  string
	status   int // of GET /, 0 for 200
	mu       sync.Mutex
	mapping  string
	puts     atomic.Int32
	bulkReqs atomic.Int32
	bulk     func(w http.ResponseWriter, ids []string)
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/":
		if f.status != 0 {
			w.WriteHeader(f.status)
			fmt.Fprintf(w, `{"error":{"type":"security_exception","reason":"no permissions for [cluster:monitor/main] and User [name=engram]"},"status":%d}`, f.status)
			return
		}
		io.WriteString(w, `{"version":{"distribution":"opensearch","number":"2.19.1"}}`)
	case r.URL.Path == "/_cat/plugins":
		io.WriteString(w, f.plugins)
	case r.Method == "HEAD":
		if f.mapping == "" {
			w.WriteHeader(404)
		}
	case r.Method == "PUT" && strings.HasSuffix(r.URL.Path, "/_mapping"):
		f.puts.Add(1)
		io.WriteString(w, `{"acknowledged":true}`)
	case r.Method == "PUT": // create the index
		f.puts.Add(1)
		var def struct {
			Mappings json.RawMessage `json:"mappings"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &def) // a fake server: a bad body shows as a wrong mapping
		f.mapping = `{"experience_events":{"mappings":` + string(def.Mappings) + `}}`
		io.WriteString(w, `{"acknowledged":true}`)
	case strings.HasSuffix(r.URL.Path, "/_mapping"):
		io.WriteString(w, f.mapping)
	case strings.HasSuffix(r.URL.Path, "/_bulk"):
		f.bulkReqs.Add(1)
		var ids []string
		sc := bufio.NewScanner(r.Body)
		sc.Buffer(nil, 1<<20)
		for n := 0; sc.Scan(); n++ {
			if n%2 == 0 {
				var a struct {
					Create struct {
						ID string `json:"_id"`
					} `json:"create"`
				}
				_ = json.Unmarshal(sc.Bytes(), &a)
				ids = append(ids, a.Create.ID)
			}
		}
		f.bulk(w, ids)
	default:
		w.WriteHeader(404)
		io.WriteString(w, `{"error":{"type":"x","reason":"unexpected `+r.Method+" "+r.URL.Path+`"},"status":404}`)
	}
}

func fakeIndex(t *testing.T, f *fake, cfg Config) (*Index, error) {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.URLs = []string{srv.URL}
	cfg.Index = "experience_events"
	if cfg.Dimension == 0 {
		cfg.Dimension = 8
	}
	cfg.Timeout = 5 * time.Second
	ix, err := Open(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { ix.Close() })
	}
	return ix, err
}

func TestWholeRequestFailure(t *testing.T) {
	f := &fake{plugins: `[{"component":"opensearch-knn"}]`}
	calls := 0
	f.bulk = func(w http.ResponseWriter, ids []string) {
		calls++
		if calls == 2 { // the second request of three fails as a whole
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"type":"cluster_block_exception","reason":"blocked by: [SERVICE_UNAVAILABLE/1/state not recovered]"},"status":503}`)
			return
		}
		var items []string
		for _, id := range ids {
			items = append(items, fmt.Sprintf(`{"create":{"_id":%q,"status":201,"result":"created"}}`, id))
		}
		fmt.Fprintf(w, `{"errors":false,"items":[%s]}`, strings.Join(items, ","))
	}
	ix, err := fakeIndex(t, f, Config{BatchDocs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !ix.KNN() || ix.Version() != "2.19.1" {
		t.Errorf("KNN %v Version %q", ix.KNN(), ix.Version())
	}
	docs := []*model.IndexDoc{testDoc("a"), testDoc("b"), testDoc("c"), testDoc("d"), testDoc("e")}
	res := ix.Write(context.Background(), docs)
	for i, r := range res {
		if i == 2 || i == 3 {
			var se *StatusError
			if r.Created || !errors.As(r.Err, &se) || se.Status != 503 || !IsTransient(r.Err) ||
				!strings.Contains(r.Err.Error(), "cluster_block_exception") || !strings.Contains(r.Err.Error(), "bulk of 2 documents not indexed") {
				t.Errorf("doc %d: %+v", i, r)
			}
			if docs[i].IngestedAt != "" {
				t.Errorf("doc %d: IngestedAt set", i)
			}
			continue
		}
		if !r.Created || r.Err != nil || docs[i].IngestedAt == "" {
			t.Errorf("doc %d: %+v", i, r)
		}
	}
	t.Logf("%v", res[2].Err)
}

func TestBulkItemStatuses(t *testing.T) {
	f := &fake{plugins: `[]`}
	f.bulk = func(w http.ResponseWriter, ids []string) {
		io.WriteString(w, `{"errors":true,"items":[
			{"create":{"_id":"a","status":201,"result":"created"}},
			{"create":{"_id":"b","status":409,"error":{"type":"version_conflict_engine_exception","reason":"[b]: version conflict, document already exists (current version [1])"}}},
			{"create":{"_id":"c","status":429,"error":{"type":"es_rejected_execution_exception","reason":"rejected execution"}}},
			{"create":{"_id":"d","status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse","caused_by":{"type":"illegal_argument_exception","reason":"Vector dimension mismatch. Expected: 8, Given: 3"}}}}]}`)
	}
	ix, err := fakeIndex(t, f, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ix.KNN() {
		t.Error("KNN() without the plugin")
	}
	res := ix.Write(context.Background(), []*model.IndexDoc{testDoc("a"), testDoc("b"), testDoc("c"), testDoc("d")})
	if !res[0].Created || res[0].Err != nil || res[1].Created || res[1].Err != nil {
		t.Errorf("%+v %+v", res[0], res[1])
	}
	if !IsTransient(res[2].Err) || res[2].Created {
		t.Errorf("429 item: %+v", res[2])
	}
	if want := "opensearch: document d: 400 mapper_parsing_exception: failed to parse (caused by illegal_argument_exception: Vector dimension mismatch. Expected: 8, Given: 3)"; res[3].Err == nil || res[3].Err.Error() != want {
		t.Errorf("item error %v\nwant %s", res[3].Err, want)
	}

	// An answer with the wrong number of items fails the whole request.
	res = ix.Write(context.Background(), []*model.IndexDoc{testDoc("a")})
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "answered with 4 items") {
		t.Errorf("%+v", res[0])
	}
}

func TestOpenErrorsFake(t *testing.T) {
	_, err := fakeIndex(t, &fake{status: 403}, Config{Username: "engram"})
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden") || !strings.Contains(err.Error(), "security_exception") ||
		!strings.Contains(err.Error(), `user "engram" lacks a permission`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("403: %v", err)
	}
	_, err = fakeIndex(t, &fake{status: 401}, Config{})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "set OPENSEARCH_USERNAME/OPENSEARCH_PASSWORD") {
		t.Errorf("401 without credentials: %v", err)
	}
	// Creating an index with k-NN needs the dimension.
	_, err = fakeIndex(t, &fake{plugins: `[{"component":"opensearch-knn"}]`}, Config{Dimension: -1})
	if err == nil || !strings.Contains(err.Error(), "dimension is unknown") {
		t.Errorf("no dimension: %v", err)
	}
	// An existing index: only the missing extension fields are put.
	f := &fake{plugins: `[]`, mapping: `{"experience_events":{"mappings":{"properties":{"event_id":{"type":"keyword"},"turn_id":{"type":"keyword"}}}}}`}
	var l logs
	if _, err := fakeIndex(t, f, Config{Logf: l.logf}); err != nil {
		t.Fatal(err)
	}
	if f.puts.Load() != 1 || !strings.Contains(l.String(), "added fields ingested_at, latency_ms, source, success, tenant_id, tool, trace_id to index") {
		t.Errorf("puts %d, log:\n%s", f.puts.Load(), l.String())
	}
	// Something that is not OpenSearch.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html>hello</html>")
	}))
	defer other.Close()
	_, err = Open(context.Background(), Config{URLs: []string{other.URL}})
	if err == nil || !strings.Contains(err.Error(), "is this the URL of an OpenSearch node?") {
		t.Errorf("not OpenSearch: %v", err)
	}
	// A CA file that is not PEM.
	_, err = Open(context.Background(), Config{URLs: []string{"https://127.0.0.1:1"}, CAFile: "unit_test.go"})
	if err == nil || !strings.Contains(err.Error(), "no PEM certificate in unit_test.go") {
		t.Errorf("bad CA: %v", err)
	}
	_, err = Open(context.Background(), Config{URLs: []string{"https://127.0.0.1:1"}, CAFile: "/nonexistent/ca.pem"})
	if err == nil || !strings.Contains(err.Error(), "reading the CA file") {
		t.Errorf("missing CA: %v", err)
	}
}

func TestOpenTimeout(t *testing.T) {
	// A server that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, err = Open(context.Background(), Config{URLs: []string{"http://" + l.Addr().String()}, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") || !IsTransient(err) || time.Since(start) > 3*time.Second {
		t.Errorf("%v after %s", err, time.Since(start))
	}
}

func TestEncodeItem(t *testing.T) {
	d := testDoc(`quo"te`)
	d.Embedding = nil
	b, err := encodeItem(d, "2026-01-02T03:04:05.006Z")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) != 3 || lines[0] != `{"create":{"_id":"quo\"te"}}` || lines[2] != "" ||
		!strings.Contains(lines[1], `"embedding":null`) || !strings.Contains(lines[1], `"ingested_at":"2026-01-02T03:04:05.006Z"`) {
		t.Errorf("%s", b)
	}
	if d.IngestedAt != "" {
		t.Error("encodeItem changed the document")
	}
	bad := testDoc("nan")
	bad.Embedding[0] = func() float64 { z := 0.0; return z / z }()
	if _, err := encodeItem(bad, "x"); err == nil || !strings.Contains(err.Error(), "document nan: cannot encode") {
		t.Errorf("NaN: %v", err)
	}
	bad = testDoc("raw")
	bad.Structured = json.RawMessage(`{broken`)
	if _, err := encodeItem(bad, "x"); err == nil {
		t.Error("invalid structured JSON accepted")
	}
	if _, err := encodeItem(nil, "x"); err == nil {
		t.Error("nil accepted")
	}
}
