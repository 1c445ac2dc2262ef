package osindex

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"engram/model"
)

// Defaults of Config.
const (
	defaultKNNEngine  = "lucene"
	defaultSpaceType  = "l2"
	defaultBatchDocs  = 500
	defaultBatchBytes = 5 << 20
	defaultTimeout    = 60 * time.Second
	// defaultEfSearch is the source system's index.knn.algo_param.ef_search.
	defaultEfSearch = 100
	// HNSW parameters of the source system.
	hnswm              = 16
	hnswEfConstruction = 128
)

// Config says where the index is and how to write it.
type Config struct {
	// URLs of the cluster's nodes, e.g. "https://search.internal:9200".
	URLs     []string
	Username string
	Password string
	// CAFile is a PEM bundle added to the system roots to verify the
	// server's certificate.
	CAFile             string
	InsecureSkipVerify bool

	// Index is the index (or alias) name; model.IndexName when empty.
	Index string
	// ReadOnly opens the index for reading: a missing index is an error
	// naming the ones that exist, never created, and the mapping is left
	// as it is. A reader must not turn a mistyped name into a new index.
	ReadOnly bool
	// Timeout bounds each request (defaultTimeout, 60 s, when <= 0; the
	// server's own _bulk timeout is 1 minute).
	Timeout time.Duration

	// Dimension of the embedder's vectors: the knn_vector dimension of an
	// index engram creates, and checked against an existing one. Needed
	// only to create an index with the k-NN plugin present.
	Dimension int
	// KNNEngine and SpaceType of the knn_vector of an index engram creates
	// (defaultKNNEngine, defaultSpaceType when empty).
	KNNEngine string
	SpaceType string
	// Shards and Replicas of an index engram creates: 1 shard when <= 0,
	// Replicas as given (0 by default: a single node cannot allocate
	// replicas, the index would stay yellow).
	Shards   int
	Replicas int

	// StructuredType is the type of the structured field of an index engram
	// creates: "object" (the default, as the source system maps it: every
	// key becomes a field of its own, and a document whose structured
	// content contradicts the types seen before is rejected) or
	// "flat_object" (OpenSearch 2.7+: any shape is accepted, leaves are
	// searchable as keywords by dotted path, there are no numeric ranges).
	StructuredType string

	// Refresh is the _bulk refresh parameter: "false" (default, also when
	// empty), "true" or "wait_for".
	Refresh string
	// BatchDocs and BatchBytes bound one _bulk request
	// (defaultBatchDocs, defaultBatchBytes when <= 0).
	BatchDocs  int
	BatchBytes int
	// FlushInterval is not used by this package: Write sends what it is
	// given at once, and how long documents wait to fill a batch is the
	// pipeline's BatchWait. It is kept for callers that carry the setting.
	FlushInterval time.Duration

	// Logf receives notes (fields added to an existing index, conflicting
	// field types, no k-NN plugin). Nil discards them.
	Logf func(format string, args ...any)

	// AssumeNoKNN makes Open act as if the k-NN plugin were missing (for
	// tests of that path on a cluster that has it).
	AssumeNoKNN bool
}

// configFromEnv reads OPENSEARCH_URL (several URLs separated by commas),
// OPENSEARCH_USERNAME and OPENSEARCH_PASSWORD through getenv (os.Getenv).
func configFromEnv(getenv func(string) string) Config {
	var cfg Config
	for _, u := range strings.Split(getenv("OPENSEARCH_URL"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			cfg.URLs = append(cfg.URLs, u)
		}
	}
	cfg.Username = getenv("OPENSEARCH_USERNAME")
	cfg.Password = getenv("OPENSEARCH_PASSWORD")
	return cfg
}

// withDefaults fills the defaults and checks what can be checked offline.
func (c Config) withDefaults() (Config, error) {
	if len(c.URLs) == 0 {
		return c, fmt.Errorf("opensearch: no URL (set OPENSEARCH_URL, e.g. http://127.0.0.1:9200)")
	}
	for _, raw := range c.URLs {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("opensearch: URL %q is not http(s)://host[:port]", redactURL(raw))
		}
	}
	if c.Index == "" {
		c.Index = model.IndexName
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.KNNEngine == "" {
		c.KNNEngine = defaultKNNEngine
	}
	if c.SpaceType == "" {
		c.SpaceType = defaultSpaceType
	}
	switch c.StructuredType {
	case "":
		c.StructuredType = "object"
	case "object", "flat_object":
	default:
		return c, fmt.Errorf("opensearch: structured type %q: want object or flat_object", c.StructuredType)
	}
	if c.Shards <= 0 {
		c.Shards = 1
	}
	if c.Replicas < 0 {
		c.Replicas = 0
	}
	switch c.Refresh {
	case "":
		c.Refresh = "false"
	case "false", "true", "wait_for":
	default:
		return c, fmt.Errorf("opensearch: refresh %q: want false, true or wait_for", c.Refresh)
	}
	if c.BatchDocs <= 0 {
		c.BatchDocs = defaultBatchDocs
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = defaultBatchBytes
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c, nil
}

// Redacted describes the configuration for logs; it never shows a password,
// not even one written into a URL.
func (c Config) Redacted() string {
	urls := make([]string, len(c.URLs))
	for i, u := range c.URLs {
		urls[i] = redactURL(u)
	}
	pw := "unset"
	if c.Password != "" {
		pw = "set"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "opensearch urls=%s user=%q password=%s", strings.Join(urls, ","), c.Username, pw)
	if c.CAFile != "" {
		fmt.Fprintf(&b, " ca=%s", c.CAFile)
	}
	if c.InsecureSkipVerify {
		b.WriteString(" insecure-skip-verify")
	}
	idx := c.Index
	if idx == "" {
		idx = model.IndexName
	}
	fmt.Fprintf(&b, " index=%s dim=%d", idx, c.Dimension)
	if c.KNNEngine != "" {
		fmt.Fprintf(&b, " engine=%s", c.KNNEngine)
	}
	if c.SpaceType != "" {
		fmt.Fprintf(&b, " space=%s", c.SpaceType)
	}
	if c.Refresh != "" {
		fmt.Fprintf(&b, " refresh=%s", c.Refresh)
	}
	if c.Timeout > 0 {
		fmt.Fprintf(&b, " timeout=%s", c.Timeout)
	}
	return b.String()
}

// redactURL hides the password of a URL's user info; a URL that does not
// parse is reduced to what precedes any '@'.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			return "xxxxx@" + raw[i+1:]
		}
		return raw
	}
	return u.Redacted()
}
