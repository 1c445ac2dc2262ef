package osindex

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// ingestedAtLayout is the format of ingested_at: RFC 3339, UTC,
// milliseconds ("2026-05-08T22:31:25.123Z").
const ingestedAtLayout = "2006-01-02T15:04:05.000Z"

// errDecode marks an answer that is not the JSON expected.
var errDecode = errors.New("undecodable answer")

// maxBody bounds what is read of an answer (a _bulk answer of 500 items is
// some 100 KiB with filter_path).
const maxBody = 64 << 20

// Index is an OpenSearch index written through _bulk. It is safe for
// concurrent use.
type Index struct {
	cfg     Config
	api     *opensearchapi.Client
	url     string // first URL, redacted: for messages
	knn     bool   // the cluster has the k-NN plugin (and AssumeNoKNN is off)
	vector  bool   // the index maps embedding as knn_vector
	dim     int    // its dimension (0 when not a knn_vector)
	version string // of the cluster, from GET /

	closed   atomic.Bool
	closeMu  sync.Once
	closeErr error

	bulkRequests atomic.Int64 // _bulk requests sent, for tests
}

var _ ingest.Index = (*Index)(nil)

// Open connects to the cluster, checks it answers, detects the k-NN plugin
// and creates the index or adds the extension fields it lacks. Its errors
// are one line naming the URL and the likely fix (see *OpenError).
func Open(ctx context.Context, cfg Config) (*Index, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ix := &Index{cfg: cfg, url: redactURL(cfg.URLs[0])}
	tr, err := ix.transport()
	if err != nil {
		return nil, err
	}
	api, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{
		Addresses: cfg.URLs,
		Username:  cfg.Username,
		Password:  cfg.Password,
		Transport: tr,
		// A retried _bulk whose first attempt was applied would report its
		// documents as duplicates; retrying is the caller's decision.
		DisableRetry: true,
	}})
	if err != nil {
		return nil, &OpenError{URL: ix.url, What: oneLine(err.Error()), Err: err}
	}
	ix.api = api
	if err := ix.open(ctx); err != nil {
		_ = api.Close()
		return nil, err
	}
	return ix, nil
}

// transport is an http.Transport with the configured TLS roots.
func (ix *Index) transport() (*http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: ix.cfg.InsecureSkipVerify} //nolint:gosec // opt-in
	if ix.cfg.CAFile != "" {
		pem, err := os.ReadFile(ix.cfg.CAFile)
		if err != nil {
			return nil, &OpenError{URL: ix.url, What: "reading the CA file: " + err.Error(), Hint: "--opensearch-ca must name a readable PEM file", Err: err}
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			err := fmt.Errorf("no PEM certificate in %s", ix.cfg.CAFile)
			return nil, &OpenError{URL: ix.url, What: err.Error(), Hint: "--opensearch-ca must name a PEM file holding the CA certificate", Err: err}
		}
		tc.RootCAs = pool
	}
	tr.TLSClientConfig = tc
	return tr, nil
}

func (ix *Index) open(ctx context.Context) error {
	// The root document: is there an OpenSearch, and may we talk to it?
	var info struct {
		Version struct {
			Distribution string `json:"distribution"`
			Number       string `json:"number"`
		} `json:"version"`
	}
	if _, err := ix.do(ctx, "GET", "/", nil, nil, &info); err != nil {
		if errors.Is(err, errDecode) {
			return &OpenError{URL: ix.url, What: "GET / answered with something other than OpenSearch's root document",
				Hint: "is this the URL of an OpenSearch node?", Err: err}
		}
		return openError(ix.url, &ix.cfg, "GET /", err)
	}
	if info.Version.Number == "" {
		return &OpenError{URL: ix.url, What: "GET / answered without a version", Hint: "is this the URL of an OpenSearch node?"}
	}
	ix.version = info.Version.Number
	if info.Version.Distribution != "opensearch" {
		ix.cfg.Logf("opensearch %s: the cluster says it is %q %s, not OpenSearch", ix.url, info.Version.Distribution, ix.version)
	}
	knn, err := ix.detectKNN(ctx)
	if err != nil {
		ix.cfg.Logf("opensearch %s: cannot list the cluster's plugins (%v); assuming no k-NN plugin", ix.url, err)
	}
	if ix.cfg.AssumeNoKNN {
		knn = false
	}
	ix.knn = knn
	if err := ix.ensureIndex(ctx); err != nil {
		return openError(ix.url, &ix.cfg, "index "+ix.cfg.Index, err)
	}
	if !ix.knn {
		ix.cfg.Logf("opensearch %s: no k-NN plugin: embeddings are stored but not vector-indexed", ix.url)
	} else if !ix.vector {
		ix.cfg.Logf("opensearch %s: index %s has no knn_vector embedding: embeddings are stored but not vector-indexed", ix.url, ix.cfg.Index)
	}
	return nil
}

const knnPlugin = "opensearch-knn"

// detectKNN looks for the opensearch-knn plugin with _cat/plugins, then
// _nodes/plugins.
func (ix *Index) detectKNN(ctx context.Context) (bool, error) {
	var cat []struct {
		Component string `json:"component"`
	}
	q := url.Values{"format": {"json"}, "h": {"component"}}
	_, err := ix.do(ctx, "GET", "/_cat/plugins", q, nil, &cat)
	if err == nil {
		for _, p := range cat {
			if p.Component == knnPlugin {
				return true, nil
			}
		}
		return false, nil
	}
	var nodes struct {
		Nodes map[string]struct {
			Plugins []struct {
				Name string `json:"name"`
			} `json:"plugins"`
		} `json:"nodes"`
	}
	if _, err2 := ix.do(ctx, "GET", "/_nodes/plugins", nil, nil, &nodes); err2 != nil {
		return false, errors.Join(err, err2)
	}
	for _, n := range nodes.Nodes {
		for _, p := range n.Plugins {
			if p.Name == knnPlugin {
				return true, nil
			}
		}
	}
	return false, nil
}

// ensureIndex creates the index, or completes the mapping of an existing one.
func (ix *Index) ensureIndex(ctx context.Context) error {
	idx := url.PathEscape(ix.cfg.Index)
	status, err := ix.do(ctx, "HEAD", "/"+idx, nil, nil, nil)
	if err != nil && status != http.StatusNotFound {
		return err
	}
	if status == http.StatusNotFound && ix.cfg.ReadOnly {
		return ix.notFound(ctx)
	}
	if status == http.StatusNotFound {
		if ix.knn && ix.cfg.Dimension <= 0 {
			return fmt.Errorf("creating index %s: the embedding dimension is unknown (Config.Dimension)", ix.cfg.Index)
		}
		body, _ := json.Marshal(indexDefinition(ix.cfg, ix.knn))
		_, err := ix.do(ctx, "PUT", "/"+idx, nil, body, nil)
		var se *StatusError
		switch {
		case err == nil:
			ix.cfg.Logf("opensearch %s: created index %s (knn=%v, dimension %d, %d shard(s), %d replica(s))",
				ix.url, ix.cfg.Index, ix.knn, ix.cfg.Dimension, ix.cfg.Shards, ix.cfg.Replicas)
		case errors.As(err, &se) && se.Type() == "resource_already_exists_exception":
			// Another process created it meanwhile: check it as an existing one.
		default:
			return err
		}
	}
	return ix.completeMapping(ctx)
}

// notFound is the error of a reader whose index does not exist: it lists
// the indices that do (system ones, starting with a dot, left out).
func (ix *Index) notFound(ctx context.Context) error {
	var cat []struct {
		Index string `json:"index"`
	}
	q := url.Values{"format": {"json"}, "h": {"index"}, "s": {"index"}}
	if _, err := ix.do(ctx, "GET", "/_cat/indices", q, nil, &cat); err != nil {
		return fmt.Errorf("index %s does not exist (listing the existing ones failed: %w); readers never create one, 'engram ingest' does", ix.cfg.Index, err)
	}
	var names []string
	for _, c := range cat {
		if !strings.HasPrefix(c.Index, ".") {
			names = append(names, c.Index)
		}
	}
	have := "there are none"
	if len(names) > 0 {
		have = "existing: " + strings.Join(names, ", ")
	}
	return fmt.Errorf("index %s does not exist (%s); readers never create one, 'engram ingest' does", ix.cfg.Index, have)
}

// completeMapping reads the mapping, checks the embedding and adds the
// extension fields that are missing.
func (ix *Index) completeMapping(ctx context.Context) error {
	idx := url.PathEscape(ix.cfg.Index)
	// An alias answers with one entry per index behind it.
	var got map[string]struct {
		Mappings struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"mappings"`
	}
	if _, err := ix.do(ctx, "GET", "/"+idx+"/_mapping", nil, nil, &got); err != nil {
		return err
	}
	want := properties(true, ix.cfg.Dimension, ix.cfg.KNNEngine, ix.cfg.SpaceType, ix.cfg.StructuredType)
	ext := ExtensionFields()
	missing := map[string]any{}
	ix.vector = len(got) > 0
	for name, m := range got {
		props := m.Mappings.Properties
		emb := props["embedding"]
		if fieldType(emb) == "knn_vector" {
			dim := jsonInt(emb["dimension"])
			if ix.cfg.Dimension > 0 && dim != ix.cfg.Dimension {
				return fmt.Errorf("embedding of %s is a knn_vector of dimension %d, the embedder gives %d: use an embedder of that dimension or another index", name, dim, ix.cfg.Dimension)
			}
			ix.dim = dim
			if !ix.cfg.AssumeNoKNN {
				ix.knn = true // whatever the plugin listing said
			}
		} else {
			ix.vector = false
		}
		for f, def := range ext {
			if props[f] == nil {
				missing[f] = def
			}
		}
		for f, def := range want {
			have := props[f]
			if have == nil || f == "embedding" || f == "structured" {
				continue
			}
			if wt, ht := fieldType(def.(map[string]any)), fieldType(have); family(wt) != family(ht) {
				ix.cfg.Logf("opensearch %s: index %s maps %s as %s, engram writes %s: documents that carry it will be rejected",
					ix.url, name, f, ht, wt)
			}
		}
	}
	if len(missing) == 0 || ix.cfg.ReadOnly {
		return nil // a reader treats the missing fields as absent
	}
	body, _ := json.Marshal(map[string]any{"properties": missing})
	if _, err := ix.do(ctx, "PUT", "/"+idx+"/_mapping", nil, body, nil); err != nil {
		return fmt.Errorf("adding fields %s: %w", strings.Join(slices.Sorted(maps.Keys(missing)), ", "), err)
	}
	ix.cfg.Logf("opensearch %s: added fields %s to index %s", ix.url, strings.Join(slices.Sorted(maps.Keys(missing)), ", "), ix.cfg.Index)
	return nil
}

func jsonInt(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}

// request is a request to OpenSearch; the transport adds the node.
type request struct {
	path  string // escaped
	query url.Values
	body  []byte
	ctype string
}

func (r request) GetRequest(method string) (*http.Request, error) {
	u := r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		ct := r.ctype
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
		b := r.body
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// do sends a request and decodes a 2xx answer into out (when not nil). A
// non-2xx answer is a *StatusError; the status is returned with it (0 when
// there was no answer).
func (ix *Index) do(ctx context.Context, method, path string, query url.Values, body []byte, out any) (int, error) {
	return ix.send(ctx, method, request{path: path, query: query, body: body}, out)
}

func (ix *Index) send(ctx context.Context, method string, r request, out any) (int, error) {
	if ix.closed.Load() {
		return 0, fmt.Errorf("opensearch: index %w", backend.ErrClosed)
	}
	ctx, cancel := context.WithTimeout(ctx, ix.cfg.Timeout)
	defer cancel()
	req, err := r.GetRequest(method)
	if err != nil {
		return 0, err
	}
	resp, err := ix.api.Client.Stream(req.WithContext(ctx))
	if resp == nil {
		if err == nil {
			err = errors.New("no response")
		}
		return 0, fmt.Errorf("%s %s: %w", method, r.path, err)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err == nil {
		err = rerr
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, statusError(method+" "+r.path, resp.StatusCode, data)
	}
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, r.path, err)
	}
	if out != nil && method != "HEAD" {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w: %w", method, r.path, errDecode, err)
		}
	}
	return resp.StatusCode, nil
}

// KNN reports whether the cluster has the k-NN plugin (false with
// Config.AssumeNoKNN).
func (ix *Index) KNN() bool { return ix.knn }

// VectorSearch reports whether the index maps embedding as a knn_vector
// (of Dimension components), so that k-NN queries work on it.
func (ix *Index) VectorSearch() bool { return ix.vector }

// Dimension is the index's knn_vector dimension (0 without one).
func (ix *Index) Dimension() int { return ix.dim }

// Version is the cluster's version number ("2.19.1").
func (ix *Index) Version() string { return ix.version }

// Name is the index name.
func (ix *Index) Name() string { return ix.cfg.Index }

// Describe names the index for people: "opensearch URL/index".
func (ix *Index) Describe() string {
	s := "opensearch " + strings.TrimRight(ix.url, "/") + "/" + ix.cfg.Index
	if n := len(ix.cfg.URLs); n > 1 {
		s += fmt.Sprintf(" (+%d more nodes)", n-1)
	}
	return s
}

// Client is the client, for the read side. It stays usable until Close.
func (ix *Index) Client() *opensearchapi.Client { return ix.api }

// Close releases the client. Later calls fail with backend.ErrClosed.
func (ix *Index) Close() error {
	ix.closeMu.Do(func() {
		ix.closed.Store(true)
		ix.closeErr = ix.api.Close()
	})
	return ix.closeErr
}

// Write indexes docs with _bulk create actions and returns one result per
// document, in order (see docs/opensearch.md, Writing).
func (ix *Index) Write(ctx context.Context, docs []*model.IndexDoc) []ingest.IndexResult {
	res := make([]ingest.IndexResult, len(docs))
	if len(docs) == 0 {
		return res
	}
	if ix.closed.Load() {
		for i := range res {
			res[i].Err = fmt.Errorf("opensearch: index %w", backend.ErrClosed)
		}
		return res
	}
	now := time.Now().UTC().Format(ingestedAtLayout)
	var (
		buf bytes.Buffer
		pos []int // positions in docs of the items in buf
	)
	flush := func() {
		if len(pos) > 0 {
			ix.bulk(ctx, buf.Bytes(), pos, docs, res)
		}
		buf.Reset()
		pos = pos[:0]
	}
	for i, d := range docs {
		item, err := encodeItem(d, now)
		if err != nil {
			res[i].Err = err
			continue
		}
		if len(pos) > 0 && (len(pos) >= ix.cfg.BatchDocs || buf.Len()+len(item) > ix.cfg.BatchBytes) {
			flush()
		}
		buf.Write(item)
		pos = append(pos, i)
	}
	flush()
	for i, d := range docs {
		if res[i].Created {
			d.IngestedAt = now
		}
	}
	return res
}

// encodeItem is the create action and source of one document.
func encodeItem(d *model.IndexDoc, now string) ([]byte, error) {
	if d == nil {
		return nil, errors.New("opensearch: nil document")
	}
	if d.EventID == "" {
		return nil, errors.New("opensearch: document without event_id")
	}
	c := *d
	c.IngestedAt = now
	if len(c.Embedding) == 0 {
		c.Embedding = nil // null: a knn_vector rejects []
	}
	src, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("opensearch: document %s: cannot encode: %w", d.EventID, err)
	}
	id, _ := json.Marshal(d.EventID)
	b := make([]byte, 0, len(src)+len(id)+24)
	b = append(b, `{"create":{"_id":`...)
	b = append(b, id...)
	b = append(b, "}}\n"...)
	b = append(b, src...)
	return append(b, '\n'), nil
}

type bulkAnswer struct {
	Errors bool                  `json:"errors"`
	Items  []map[string]bulkItem `json:"items"`
}

type bulkItem struct {
	ID     string `json:"_id"`
	Status int    `json:"status"`
	Result string `json:"result"`
	Error  *Cause `json:"error"`
}

// bulk sends one _bulk request and fills the results of its items.
func (ix *Index) bulk(ctx context.Context, body []byte, pos []int, docs []*model.IndexDoc, res []ingest.IndexResult) {
	fail := func(err error) {
		for _, i := range pos {
			res[i].Err = err
		}
	}
	if err := ctx.Err(); err != nil {
		fail(fmt.Errorf("opensearch: not sent: %w", err))
		return
	}
	q := url.Values{"filter_path": {"errors,items.*._id,items.*.status,items.*.result,items.*.error"}}
	if ix.cfg.Refresh != "false" {
		q.Set("refresh", ix.cfg.Refresh)
	}
	ix.bulkRequests.Add(1)
	var ans bulkAnswer
	_, err := ix.send(ctx, "POST", request{
		path: "/" + url.PathEscape(ix.cfg.Index) + "/_bulk", query: q, body: body, ctype: "application/x-ndjson",
	}, &ans)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) {
			se.Op = "bulk " + ix.cfg.Index
		}
		fail(fmt.Errorf("opensearch: bulk of %d documents not indexed: %w", len(pos), err))
		return
	}
	if len(ans.Items) != len(pos) {
		fail(fmt.Errorf("opensearch: bulk of %d documents answered with %d items", len(pos), len(ans.Items)))
		return
	}
	for k, i := range pos {
		var it bulkItem
		for _, v := range ans.Items[k] { // one key: "create"
			it = v
		}
		switch {
		case it.Status >= 200 && it.Status <= 299:
			res[i].Created = it.Result == "created" || it.Result == ""
		case it.Status == http.StatusConflict && (it.Error == nil || it.Error.Type == "version_conflict_engine_exception"):
			// Already indexed: kept as it was.
		default:
			e := &ItemError{ID: docs[i].EventID, Status: it.Status}
			if it.Error != nil {
				e.Cause = *it.Error
			} else {
				e.Cause = Cause{Reason: "no error given"}
			}
			res[i].Err = e
		}
	}
}

// Get returns the document with the event id; a missing one is an error
// wrapping backend.ErrNotFound.
func (ix *Index) Get(ctx context.Context, id string) (*model.IndexDoc, error) {
	var ans struct {
		Found  bool            `json:"found"`
		Source json.RawMessage `json:"_source"`
	}
	path := "/" + url.PathEscape(ix.cfg.Index) + "/_doc/" + url.PathEscape(id)
	status, err := ix.do(ctx, "GET", path, nil, nil, &ans)
	if status == http.StatusNotFound {
		var se *StatusError
		if errors.As(err, &se) && se.Cause == nil {
			return nil, fmt.Errorf("%w: %s in %s", backend.ErrNotFound, id, ix.cfg.Index)
		}
	}
	if err != nil {
		return nil, err
	}
	if !ans.Found {
		return nil, fmt.Errorf("%w: %s in %s", backend.ErrNotFound, id, ix.cfg.Index)
	}
	var d model.IndexDoc
	if err := json.Unmarshal(ans.Source, &d); err != nil {
		return nil, fmt.Errorf("opensearch: document %s: %w", id, err)
	}
	if d.Embedding == nil {
		d.Embedding = []float64{}
	}
	return &d, nil
}

// Count is the number of documents the index holds (as of its last refresh).
func (ix *Index) Count(ctx context.Context) (int64, error) {
	var ans struct {
		Count int64 `json:"count"`
	}
	if _, err := ix.do(ctx, "GET", "/"+url.PathEscape(ix.cfg.Index)+"/_count", nil, nil, &ans); err != nil {
		return 0, err
	}
	return ans.Count, nil
}

// Refresh makes everything written so far searchable.
func (ix *Index) Refresh(ctx context.Context) error {
	_, err := ix.do(ctx, "POST", "/"+url.PathEscape(ix.cfg.Index)+"/_refresh", nil, nil, nil)
	return err
}
