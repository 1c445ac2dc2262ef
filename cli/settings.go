package cli

import (
	"encoding"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// setting is one configuration value: where it may come from (a flag,
// environment variables, a key of a config-file profile), the field of the
// typed configuration it fills, and whether it is a secret. One table
// drives flags, environment, files, `engram config` and the typed
// configuration, so they cannot drift apart.
type setting struct {
	key string // config-file key, dotted: "s3.endpoint"
	// to points at the field of a config the setting fills; its type says
	// what values the setting takes (see assign).
	to     any
	flag   string   // command-line flag, "" when none (secrets have none)
	env    []string // environment variables, first set wins
	def    string
	usage  string
	secret bool
	// choices lists the values a setting allows.
	choices []string
}

// isBool reports whether the setting is a switch on the command line
// (--s3-path-style, --s3-path-style=false).
func (s setting) isBool() bool {
	switch s.to.(type) {
	case *bool, **bool:
		return true
	}
	return false
}

// check refuses a value the setting cannot take, wherever it came from,
// and stores the value it can into its field.
func (s setting) check(v, source string) error {
	if len(s.choices) > 0 && !slices.Contains(s.choices, v) {
		return fmt.Errorf("%s = %q (%s): want %s", s.key, v, source, strings.Join(s.choices, ", "))
	}
	if err := assign(s.to, v); err != nil {
		return fmt.Errorf("%s = %q (%s): %w", s.key, v, source, err)
	}
	return nil
}

// assign parses v into the field to points at, by the field's type.
func assign(to any, v string) error {
	switch p := to.(type) {
	case *string:
		*p = v
	case *[]string: // comma-separated
		*p = nil
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				*p = append(*p, part)
			}
		}
	case *bool, **bool:
		b, ok := parseBool(v)
		if !ok {
			return errors.New("want true or false")
		}
		if q, isOpt := p.(**bool); isOpt {
			*q = &b
		} else {
			*p.(*bool) = b
		}
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return errors.New("want a positive whole number")
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("want a duration above zero such as 30s, 2m or 1m30s")
		}
		*p = d
	case encoding.TextUnmarshaler:
		return p.UnmarshalText([]byte(v))
	default:
		panic(fmt.Sprintf("setting of unhandled type %T", to))
	}
	return nil
}

// parseBool reads the spellings of a switch people use in configuration.
func parseBool(v string) (value, ok bool) {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

// flagValue is a setting's flag: a string that remembers being set.
type flagValue struct {
	v      string
	isBool bool
}

func (f *flagValue) String() string { return f.v }

func (f *flagValue) Set(v string) error {
	if f.isBool {
		if _, ok := parseBool(v); !ok {
			return fmt.Errorf("want true or false")
		}
	}
	f.v = v
	return nil
}

// IsBoolFlag lets a switch be given without a value.
func (f *flagValue) IsBoolFlag() bool { return f.isBool }

func settingsOf(c *config) []setting {
	return []setting{
		{key: "data", to: &c.Data, flag: "data", env: []string{"ENGRAM_DATA"}, usage: "data directory of the embedded stores (default $XDG_DATA_HOME/engram)"},
		{key: "archive", to: &c.Archive, flag: "archive", env: []string{"ENGRAM_ARCHIVE"}, def: "dir", usage: "archive backend: dir (embedded) or s3", choices: []string{"dir", "s3"}},
		{key: "index", to: &c.Index, flag: "index", env: []string{"ENGRAM_INDEX"}, def: "sqlite", usage: "index backend: sqlite (embedded) or opensearch", choices: []string{"sqlite", "opensearch"}},
		{key: "tenant", to: &c.Tenant, flag: "tenant", env: []string{"ENGRAM_TENANT"}, usage: "scope every read and write to this tenant"},
		{key: "search.rank_window", to: &c.Search.RankWindow, flag: "rank-window", env: []string{"ENGRAM_RANK_WINDOW"}, def: "2000", usage: "a search with words ranks the newest N matches by relevance; all ranks every match (slow for common words on the embedded index)"},
		{key: "recall.formula", to: &c.Recall.Formula, flag: "formula", env: []string{"ENGRAM_RECALL_FORMULA"}, def: "hybrid", usage: "recall's score: hybrid (the weighted sum of every factor) or salience (recency × importance, the source systems' ordering)", choices: []string{"hybrid", "salience"}},
		{key: "recall.weights", to: &c.Recall.Weights, flag: "weights", env: []string{"ENGRAM_RECALL_WEIGHTS"}, def: "text=0.3,similarity=0.3,importance=0.15,recency=0.15,reward=0.05,decay=0.05", usage: "recall's hybrid weights, factor=weight: a factor not named weighs 0; relative (divided by their sum)"},
		{key: "recall.half_life", to: &c.Recall.HalfLife, flag: "half-life", env: []string{"ENGRAM_RECALL_HALF_LIFE"}, def: "24h", usage: "recall's recency: 0.5 at this age, 0.25 at twice it"},
		{key: "recall.window", to: &c.Recall.Window, flag: "recall-window", env: []string{"ENGRAM_RECALL_WINDOW"}, def: "1000", usage: "recall's candidates: the newest N documents holding a word of the prompt (the best N on OpenSearch), and the 4×K nearest by embedding (40 to 200)"},
		{key: "s3.endpoint", to: &c.S3.Endpoint, flag: "s3-endpoint", env: []string{"S3_ENDPOINT"}, usage: "S3 endpoint, host:port or URL (empty: AWS)"},
		{key: "s3.bucket", to: &c.S3.Bucket, flag: "s3-bucket", env: []string{"S3_BUCKET"}, usage: "S3 bucket of the archive"},
		{key: "s3.region", to: &c.S3.Region, flag: "s3-region", env: []string{"S3_REGION", "AWS_REGION"}, usage: "S3 region"},
		{key: "s3.access_key", to: &c.S3.AccessKey, flag: "s3-access-key", env: []string{"S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"}, usage: "S3 access key id"},
		{key: "s3.secret_key", to: &c.S3.SecretKey, env: []string{"S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"}, secret: true, usage: "S3 secret key (environment or file only)"},
		{key: "s3.secret_key_file", to: &c.S3.SecretKeyFile, flag: "s3-secret-key-file", env: []string{"ENGRAM_S3_SECRET_KEY_FILE"}, usage: "file holding the S3 secret key"},
		{key: "s3.create_bucket", to: &c.S3.CreateBucket, flag: "s3-create-bucket", env: []string{"ENGRAM_S3_CREATE_BUCKET"}, def: "false", usage: "create the bucket when it does not exist"},
		{key: "s3.path_style", to: &c.S3.PathStyle, flag: "s3-path-style", env: []string{"S3_FORCE_PATH_STYLE"}, def: "true", usage: "path-style bucket addressing (true for most self-hosted servers)"},
		{key: "s3.tls", to: &c.S3.TLS, flag: "s3-tls", env: []string{"ENGRAM_S3_TLS"}, usage: "use TLS to S3 (default: from the endpoint URL's scheme, else true)"},
		{key: "s3.ca_file", to: &c.S3.CAFile, flag: "s3-ca", env: []string{"ENGRAM_S3_CA_FILE"}, usage: "PEM CA bundle trusted for S3"},
		{key: "s3.insecure_skip_verify", to: &c.S3.InsecureSkipVerify, flag: "s3-insecure-skip-verify", env: []string{"ENGRAM_S3_INSECURE_SKIP_VERIFY"}, def: "false", usage: "INSECURE: do not verify S3's TLS certificate (testing only)"},
		{key: "opensearch.url", to: &c.OpenSearch.URLs, flag: "opensearch-url", env: []string{"OPENSEARCH_URL"}, usage: "OpenSearch URL(s), comma-separated"},
		{key: "opensearch.username", to: &c.OpenSearch.Username, flag: "opensearch-username", env: []string{"OPENSEARCH_USERNAME"}, usage: "OpenSearch user"},
		{key: "opensearch.password", to: &c.OpenSearch.Password, env: []string{"OPENSEARCH_PASSWORD"}, secret: true, usage: "OpenSearch password (environment or file only)"},
		{key: "opensearch.password_file", to: &c.OpenSearch.PasswordFile, flag: "opensearch-password-file", env: []string{"ENGRAM_OPENSEARCH_PASSWORD_FILE"}, usage: "file holding the OpenSearch password"},
		{key: "opensearch.ca_file", to: &c.OpenSearch.CAFile, flag: "opensearch-ca", env: []string{"ENGRAM_OPENSEARCH_CA_FILE"}, usage: "PEM CA bundle trusted for OpenSearch"},
		{key: "opensearch.insecure_skip_verify", to: &c.OpenSearch.InsecureSkipVerify, flag: "opensearch-insecure-skip-verify", env: []string{"ENGRAM_OPENSEARCH_INSECURE_SKIP_VERIFY"}, def: "false", usage: "INSECURE: do not verify OpenSearch's TLS certificate (testing only)"},
		{key: "opensearch.index", to: &c.OpenSearch.Index, flag: "opensearch-index", env: []string{"ENGRAM_OPENSEARCH_INDEX"}, def: "experience_events", usage: "OpenSearch index name"},
		{key: "opensearch.knn_engine", to: &c.OpenSearch.KNNEngine, flag: "opensearch-knn-engine", env: []string{"ENGRAM_OPENSEARCH_KNN_ENGINE"}, def: "lucene", usage: "k-NN engine of an index engram creates (lucene needs no native library)", choices: []string{"lucene", "faiss", "nmslib"}},
		{key: "opensearch.refresh", to: &c.OpenSearch.Refresh, flag: "opensearch-refresh", env: []string{"ENGRAM_OPENSEARCH_REFRESH"}, def: "false", usage: "refresh policy of bulk writes: false, true or wait_for", choices: []string{"false", "true", "wait_for"}},
		{key: "opensearch.timeout", to: &c.OpenSearch.Timeout, flag: "opensearch-timeout", env: []string{"ENGRAM_OPENSEARCH_TIMEOUT"}, def: "30s", usage: "OpenSearch request timeout"},
		{key: "kafka.brokers", to: &c.Kafka.Brokers, flag: "kafka-brokers", env: []string{"KAFKA_BROKERS", "KAFKA_BOOTSTRAP_SERVER"}, usage: "Kafka brokers, host:port comma-separated: notifications go to Kafka, and worker/produce/tail --topic use it"},
		{key: "kafka.client_id", to: &c.Kafka.ClientID, flag: "kafka-client-id", env: []string{"ENGRAM_KAFKA_CLIENT_ID"}, def: "engram", usage: "Kafka client id"},
		{key: "kafka.compression", to: &c.Kafka.Compression, flag: "kafka-compression", env: []string{"ENGRAM_KAFKA_COMPRESSION"}, def: "gzip", usage: "compression of the messages engram produces: gzip (the source system's), snappy, lz4, zstd or none"},
		{key: "kafka.group", to: &c.Kafka.Group, flag: "kafka-group", env: []string{"KAFKA_GROUP_ID"}, def: "ingestion-workers", usage: "consumer group of engram worker"},
		{key: "kafka.topic_raw", to: &c.Kafka.TopicRaw, flag: "kafka-topic-raw", env: []string{"ENGRAM_KAFKA_TOPIC_RAW"}, def: "experience.raw", usage: "topic of incoming events"},
		{key: "kafka.topic_enriched", to: &c.Kafka.TopicEnriched, flag: "kafka-topic-enriched", env: []string{"ENGRAM_KAFKA_TOPIC_ENRICHED"}, def: "experience.enriched", usage: "topic of experience.enriched notifications"},
		{key: "kafka.topic_indexed", to: &c.Kafka.TopicIndexed, flag: "kafka-topic-indexed", env: []string{"ENGRAM_KAFKA_TOPIC_INDEXED"}, def: "memory.indexed", usage: "topic of memory.indexed notifications"},
		{key: "kafka.topic_audit", to: &c.Kafka.TopicAudit, flag: "kafka-topic-audit", env: []string{"ENGRAM_KAFKA_TOPIC_AUDIT"}, def: "audit.events", usage: "audit mirror of every message engram publishes (empty: no mirror)"},
		{key: "kafka.topic_rejected", to: &c.Kafka.TopicRejected, flag: "kafka-topic-rejected", env: []string{"ENGRAM_KAFKA_TOPIC_REJECTED"}, def: "experience.raw.rejected", usage: "topic of raw messages the worker rejects"},
		{key: "kafka.topic_feedback", to: &c.Kafka.TopicFeedback, flag: "kafka-topic-feedback", env: []string{"ENGRAM_KAFKA_TOPIC_FEEDBACK"}, def: "memory.feedback", usage: "the source system's memory.feedback topic, shown in the Topics view (empty: not shown)"},
		{key: "kafka.security_protocol", to: &c.Kafka.SecurityProtocol, flag: "kafka-security-protocol", env: []string{"KAFKA_SECURITY_PROTOCOL"}, usage: "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (default: SSL when kafka.tls is set)", choices: []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}},
		{key: "kafka.tls", to: &c.Kafka.TLS, flag: "kafka-tls", env: []string{"KAFKA_SSL"}, def: "false", usage: "use TLS to the brokers"},
		{key: "kafka.ca_file", to: &c.Kafka.CAFile, flag: "kafka-ca", env: []string{"ENGRAM_KAFKA_CA_FILE"}, usage: "PEM CA bundle trusted for the brokers"},
		{key: "kafka.ca_pem", to: &c.Kafka.CAPEM, env: []string{"KAFKA_CA_CERT"}, usage: "PEM CA certificate text (the source system's KAFKA_CA_CERT)"},
		{key: "kafka.cert_file", to: &c.Kafka.CertFile, flag: "kafka-cert", env: []string{"ENGRAM_KAFKA_CERT_FILE"}, usage: "PEM client certificate for mutual TLS"},
		{key: "kafka.cert_pem", to: &c.Kafka.CertPEM, env: []string{"KAFKA_ACCESS_CERT"}, usage: "PEM client certificate text (KAFKA_ACCESS_CERT)"},
		{key: "kafka.key_file", to: &c.Kafka.KeyFile, flag: "kafka-key", env: []string{"ENGRAM_KAFKA_KEY_FILE"}, usage: "PEM key of the client certificate"},
		{key: "kafka.key_pem", to: &c.Kafka.KeyPEM, env: []string{"KAFKA_ACCESS_KEY"}, secret: true, usage: "PEM client key text (KAFKA_ACCESS_KEY; environment only)"},
		{key: "kafka.sasl_mechanism", to: &c.Kafka.SASLMechanism, flag: "kafka-sasl-mechanism", env: []string{"KAFKA_SASL_MECHANISM"}, usage: "SASL: plain, scram-sha-256 or scram-sha-512", choices: []string{"plain", "scram-sha-256", "scram-sha-512"}},
		{key: "kafka.sasl_username", to: &c.Kafka.SASLUsername, flag: "kafka-sasl-username", env: []string{"KAFKA_SASL_USERNAME"}, usage: "SASL user"},
		{key: "kafka.sasl_password", to: &c.Kafka.SASLPassword, env: []string{"KAFKA_SASL_PASSWORD"}, secret: true, usage: "SASL password (environment or file only)"},
		{key: "kafka.sasl_password_file", to: &c.Kafka.SASLPasswordFile, flag: "kafka-sasl-password-file", env: []string{"ENGRAM_KAFKA_SASL_PASSWORD_FILE"}, usage: "file holding the SASL password"},
		{key: "kafka.schema_registry_url", to: &c.Kafka.SchemaRegistryURL, flag: "kafka-schema-registry-url", env: []string{"KAFKA_SCHEMA_REGISTRY_URL", "SCHEMA_REGISTRY_URL"}, usage: "schema registry (Confluent API; Apicurio's under /apis/ccompat/v7) that Avro messages are read through and produce --format avro registers in"},
		{key: "kafka.schema_registry_username", to: &c.Kafka.SchemaRegistryUsername, flag: "kafka-schema-registry-username", env: []string{"KAFKA_SCHEMA_REGISTRY_USERNAME", "SCHEMA_REGISTRY_USERNAME"}, usage: "schema registry user (HTTP basic auth)"},
		{key: "kafka.schema_registry_password", to: &c.Kafka.SchemaRegistryPassword, env: []string{"KAFKA_SCHEMA_REGISTRY_PASSWORD", "SCHEMA_REGISTRY_PASSWORD"}, secret: true, usage: "schema registry password (environment or file only)"},
		{key: "kafka.schema_registry_password_file", to: &c.Kafka.SchemaRegistryPasswordFile, flag: "kafka-schema-registry-password-file", env: []string{"ENGRAM_KAFKA_SCHEMA_REGISTRY_PASSWORD_FILE"}, usage: "file holding the schema registry password"},
		{key: "kafka.schema_registry_ca_file", to: &c.Kafka.SchemaRegistryCAFile, flag: "kafka-schema-registry-ca", env: []string{"ENGRAM_KAFKA_SCHEMA_REGISTRY_CA_FILE"}, usage: "PEM CA bundle trusted for an https schema registry (beside the system roots)"},
		{key: "kafka.session_timeout", to: &c.Kafka.SessionTimeout, flag: "kafka-session-timeout", env: []string{"ENGRAM_KAFKA_SESSION_TIMEOUT"}, def: "45s", usage: "a worker that stops heartbeating (killed) leaves the group after this long, and its partitions move on (at least 6s)"},
		{key: "worker.health_port", to: &c.Worker.HealthPort, flag: "health-port", env: []string{"HEALTH_PORT", "PORT"}, usage: "port of engram worker's GET /health and GET /metrics on localhost (empty: no server)"},
		{key: "worker.health_addr", to: &c.Worker.HealthAddr, flag: "health-addr", env: []string{"ENGRAM_HEALTH_ADDR"}, def: "127.0.0.1", usage: "address the health server listens on"},
		{key: "worker.disable_health", to: &c.Worker.DisableHealth, env: []string{"DISABLE_HEALTH_SERVER"}, def: "false", usage: "no health server even when a port is set"},
		{key: "embedder.kind", to: &c.Embedder.Kind, flag: "embedder", env: []string{"ENGRAM_EMBEDDER"}, def: "stub", usage: "embedder: stub (offline, deterministic, not semantic), hashed (offline, deterministic, from word features: similar texts land together; the demo's) or http (OpenAI-compatible)", choices: []string{"stub", "hashed", "http"}},
		{key: "embedder.endpoint", to: &c.Embedder.Endpoint, flag: "embedder-endpoint", env: []string{"ENGRAM_EMBEDDER_ENDPOINT"}, usage: "embeddings endpoint URL (http embedder)"},
		{key: "embedder.model", to: &c.Embedder.Model, flag: "embedder-model", env: []string{"ENGRAM_EMBEDDER_MODEL"}, def: "text-embedding-3-small", usage: "embedding model (http embedder)"},
		{key: "embedder.dimension", to: &c.Embedder.Dimension, flag: "embed-dim", env: []string{"ENGRAM_EMBEDDER_DIMENSION"}, usage: "embedding dimension (default 8 for stub, 256 for hashed, 1536 for http)"},
		{key: "embedder.api_key", to: &c.Embedder.APIKey, env: []string{"ENGRAM_EMBEDDER_API_KEY", "OPENAI_API_KEY"}, secret: true, usage: "embedder API key (environment or file only)"},
		{key: "embedder.api_key_file", to: &c.Embedder.APIKeyFile, flag: "embedder-api-key-file", env: []string{"ENGRAM_EMBEDDER_API_KEY_FILE"}, usage: "file holding the embedder API key"},
		// OpenTelemetry: the standard variables, signal-specific ones first as
		// the specification orders them. No endpoint: no spans, no cost.
		{key: "otel.endpoint", to: &c.OTel.Endpoint, flag: "otel-endpoint", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT"}, usage: "OTLP collector base URL for spans, e.g. http://localhost:4318 (/v1/traces is added over HTTP); empty: no spans"},
		{key: "otel.traces_endpoint", to: &c.OTel.TracesEndpoint, flag: "otel-traces-endpoint", env: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}, usage: "OTLP traces URL, used as given (wins over otel.endpoint)"},
		{key: "otel.protocol", to: &c.OTel.Protocol, flag: "otel-protocol", env: []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}, def: "http/protobuf", usage: "OTLP transport: http/protobuf or grpc", choices: []string{"http/protobuf", "grpc"}},
		{key: "otel.headers", to: &c.OTel.Headers, env: []string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"}, secret: true, usage: "headers of OTLP requests, key=value,... (environment or file only)"},
		{key: "otel.headers_file", to: &c.OTel.HeadersFile, flag: "otel-headers-file", env: []string{"ENGRAM_OTEL_HEADERS_FILE"}, usage: "file holding the OTLP headers"},
		{key: "otel.service_name", to: &c.OTel.ServiceName, flag: "otel-service-name", env: []string{"OTEL_SERVICE_NAME"}, def: "engram", usage: "service.name of engram's spans"},
		{key: "otel.resource_attributes", to: &c.OTel.ResourceAttributes, flag: "otel-resource-attributes", env: []string{"OTEL_RESOURCE_ATTRIBUTES"}, usage: "resource attributes of engram's spans, key=value,..."},
		{key: "otel.traces_sampler", to: &c.OTel.TracesSampler, flag: "otel-traces-sampler", env: []string{"OTEL_TRACES_SAMPLER"}, def: "parentbased_always_on", usage: "span sampler", choices: []string{"parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio", "always_on", "always_off", "traceidratio"}},
		{key: "otel.traces_sampler_arg", to: &c.OTel.TracesSamplerArg, flag: "otel-traces-sampler-arg", env: []string{"OTEL_TRACES_SAMPLER_ARG"}, usage: "the sampler's ratio, 0 to 1 (traceidratio samplers)"},
		{key: "otel.sdk_disabled", to: &c.OTel.SDKDisabled, flag: "otel-sdk-disabled", env: []string{"OTEL_SDK_DISABLED"}, def: "false", usage: "export no spans whatever the endpoint"},
		{key: "otel.stage_spans", to: &c.OTel.StageSpans, flag: "otel-stage-spans", env: []string{"ENGRAM_OTEL_STAGE_SPANS"}, def: "all", usage: "child spans of experience.ingest: all (every stage) or main (embed, objectstore.put, opensearch.index; the other stages' durations as attributes of the root: half the spans)", choices: []string{"all", "main"}},
		{key: "ui.hop_timeout", to: &c.UI.HopTimeout, flag: "hop-timeout", env: []string{"ENGRAM_HOP_TIMEOUT"}, def: "30s", usage: "the inspector's send to the raw topic (ctrl+p in the record form): how long each next hop may take before it is shown stuck"},
		{key: "trace.url", to: &c.Trace.URL, flag: "trace-url", env: []string{"ENGRAM_TRACE_URL"}, usage: "link from an event to its trace in the inspector: {traceId} (and {spanId}) replaced, e.g. http://localhost:16686/trace/{traceId}"},
	}
}

// settingsTable is the table for what does not fill a configuration: flags,
// help, file keys, `engram config`.
var settingsTable = settingsOf(new(config))

// config is the typed configuration the commands read (conf.S3.Endpoint):
// one field per row of the settings table, which fills it. A misspelt
// field does not compile, where a misspelt key would read "".
type config struct {
	Data    string
	Archive string
	Index   string
	Tenant  string
	Search  struct{ RankWindow searchWindow }
	Recall  struct {
		Formula  string
		Weights  recallWeights
		HalfLife time.Duration
		Window   int
	}
	S3 struct {
		Endpoint, Bucket, Region            string
		AccessKey, SecretKey, SecretKeyFile string
		CreateBucket, PathStyle             bool
		TLS                                 *bool // nil: from the endpoint URL's scheme
		CAFile                              string
		InsecureSkipVerify                  bool
	}
	OpenSearch struct {
		URLs                             []string
		Username, Password, PasswordFile string
		CAFile                           string
		InsecureSkipVerify               bool
		Index, KNNEngine, Refresh        string
		Timeout                          time.Duration
	}
	Kafka struct {
		Brokers                                                          []string
		ClientID, Compression, Group                                     string
		TopicRaw, TopicEnriched, TopicIndexed, TopicAudit, TopicRejected string
		TopicFeedback                                                    string
		SecurityProtocol                                                 string
		TLS                                                              bool
		CAFile, CAPEM, CertFile, CertPEM, KeyFile, KeyPEM                string
		SASLMechanism, SASLUsername, SASLPassword, SASLPasswordFile      string
		SessionTimeout                                                   time.Duration
		// The schema registry Avro messages are read through.
		SchemaRegistryURL, SchemaRegistryUsername          string
		SchemaRegistryPassword, SchemaRegistryPasswordFile string
		SchemaRegistryCAFile                               string
	}
	Worker struct {
		HealthPort, HealthAddr string
		DisableHealth          bool
	}
	Embedder struct {
		Kind, Endpoint, Model string
		Dimension             int // 0: the kind's own
		APIKey, APIKeyFile    string
	}
	OTel struct {
		Endpoint, TracesEndpoint, Protocol string
		Headers, HeadersFile               string
		ServiceName, ResourceAttributes    string
		TracesSampler, TracesSamplerArg    string
		SDKDisabled                        bool
		StageSpans                         string
	}
	UI    struct{ HopTimeout time.Duration }
	Trace struct{ URL string }
}

// searchWindow is search.rank_window: a search with words ranks the newest
// N matches, or every match (all, -1).
type searchWindow int

func (w *searchWindow) UnmarshalText(b []byte) error {
	if string(b) == "all" {
		*w = -1
		return nil
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n <= 0 {
		return errors.New("want a positive whole number or all")
	}
	*w = searchWindow(n)
	return nil
}

// resolved is the effective configuration: the typed one the commands
// read, and every key's value and where it came from.
type resolved struct {
	config
	values  map[string]string
	sources map[string]string
	profile string
	file    string
}

// common holds what every command parses: the config file and profile, and
// one flag per non-secret setting.
type common struct {
	configFile, profile string
}

func (c *common) bind(fs *flag.FlagSet) {
	fs.StringVar(&c.configFile, "config", "", "config file (default $XDG_CONFIG_HOME/engram/config.toml)")
	fs.StringVar(&c.profile, "profile", "", "profile of the config file to use (default: the file's \"profile\" key, else \"default\")")
	for _, s := range settingsTable {
		if s.flag != "" {
			fs.Var(&flagValue{v: s.def, isBool: s.isBool()}, s.flag, s.usage)
		}
	}
}

// resolve layers defaults < profile < environment < flags.
func (c *common) resolve(fs *flag.FlagSet, getenv func(string) string) (*resolved, error) {
	r := defaults()
	if err := c.applyFile(r, getenv); err != nil {
		return nil, err
	}
	for _, s := range settingsTable {
		for _, name := range s.env {
			if v := getenv(name); v != "" {
				r.values[s.key], r.sources[s.key] = v, "env "+name
				break
			}
		}
	}
	fs.Visit(func(f *flag.Flag) {
		for _, s := range settingsTable {
			if s.flag == f.Name {
				r.values[s.key], r.sources[s.key] = f.Value.String(), "flag --"+f.Name
			}
		}
	})
	if err := r.fill(); err != nil {
		return nil, err
	}
	return r, r.readSecretFiles()
}

// given reports whether the setting that fills field, a field of r's
// configuration, was given (by a profile, the environment or a flag)
// rather than left at its default: conf.given(&conf.Embedder.Kind).
func (r *resolved) given(field any) bool {
	for _, s := range settingsOf(&r.config) {
		if s.to == field {
			src := r.sources[s.key]
			return src != "" && src != "default"
		}
	}
	panic(fmt.Sprintf("given: %T is not a field of the configuration", field))
}

// defaults is the table's defaults, not yet filled into the typed
// configuration.
func defaults() *resolved {
	r := &resolved{values: map[string]string{}, sources: map[string]string{}}
	for _, s := range settingsTable {
		if s.def != "" {
			r.values[s.key], r.sources[s.key] = s.def, "default"
		}
	}
	return r
}

// fill checks every value set and stores it into the typed configuration.
func (r *resolved) fill() error {
	for _, s := range settingsOf(&r.config) {
		if v, ok := r.values[s.key]; ok && v != "" {
			if err := s.check(v, r.sources[s.key]); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolvedFrom is the configuration of values over the defaults, for a
// command that configures its stores itself (the demo) and for tests.
func resolvedFrom(values map[string]string) (*resolved, error) {
	r := defaults()
	for k, v := range values {
		if !knownKey(k) {
			return nil, fmt.Errorf("unknown key %q", k)
		}
		r.values[k], r.sources[k] = v, "given"
	}
	return r, r.fill()
}

func (c *common) applyFile(r *resolved, getenv func(string) string) error {
	path, explicit := c.configFile, c.configFile != ""
	if !explicit {
		path = configPath(getenv)
	}
	raw := map[string]any{}
	_, err := toml.DecodeFile(path, &raw)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		if c.profile != "" {
			return fmt.Errorf("--profile %s: no config file at %s", c.profile, path)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	r.file = path
	for _, k := range keys(raw) {
		if k != "profile" && k != "profiles" { // else silently ignored
			return fmt.Errorf("config %s: top-level key %q: settings go in a profile, as [profiles.default] %s", path, k, k)
		}
	}
	profile := c.profile
	if profile == "" {
		profile, _ = raw["profile"].(string)
	}
	if profile == "" {
		profile = "default"
	}
	profiles, _ := raw["profiles"].(map[string]any)
	p, ok := profiles[profile].(map[string]any)
	if !ok {
		if c.profile == "" && profile == "default" {
			return nil
		}
		return fmt.Errorf("config %s: no profile %q (have: %s)", path, profile, strings.Join(keys(profiles), ", "))
	}
	r.profile = profile
	return r.applyTable(p, "", path)
}

func (r *resolved) applyTable(t map[string]any, prefix, path string) error {
	for k, v := range t {
		key := prefix + k
		if sub, ok := v.(map[string]any); ok {
			if err := r.applyTable(sub, key+".", path); err != nil {
				return err
			}
			continue
		}
		if !knownKey(key) {
			return fmt.Errorf("config %s, profile %s: unknown key %q", path, r.profile, key)
		}
		if list, ok := v.([]any); ok {
			parts := make([]string, len(list))
			for i, x := range list {
				parts[i] = fmt.Sprint(x)
			}
			v = strings.Join(parts, ",")
		}
		r.values[key], r.sources[key] = fmt.Sprint(v), "profile "+r.profile
	}
	return nil
}

func knownKey(key string) bool {
	for _, s := range settingsTable {
		if s.key == key {
			return true
		}
	}
	return false
}

// readSecretFiles fills a secret from its *_file setting when the secret
// itself was not given.
func (r *resolved) readSecretFiles() error {
	for _, s := range settingsOf(&r.config) {
		if !s.secret || r.values[s.key] != "" {
			continue
		}
		fileKey := s.key + "_file"
		if f := r.values[fileKey]; f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("%s: %w", fileKey, err)
			}
			r.values[s.key], r.sources[s.key] = strings.TrimSpace(string(b)), "file "+f
			if err := assign(s.to, r.values[s.key]); err != nil {
				return fmt.Errorf("%s: %w", fileKey, err)
			}
		}
	}
	return nil
}

func configPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(getenv("HOME"), ".config")
	}
	return filepath.Join(dir, "engram", "config.toml")
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// secrets lists the values of every secret setting that is set, so output
// can be checked (and scrubbed) for them.
func (r *resolved) secrets() []string {
	var out []string
	for _, s := range settingsTable {
		if v := r.values[s.key]; s.secret && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// redact replaces every secret value inside s: errors from client
// libraries may quote a URL or header that holds one.
func (r *resolved) redact(s string) string {
	for _, v := range r.secrets() {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "<redacted>")
		}
	}
	return s
}
