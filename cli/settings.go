package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// setting is one configuration value: where it may come from (a flag,
// environment variables, a key of a config-file profile) and whether it is
// a secret. One table drives flags, environment, files and `engram config`,
// so they cannot drift apart.
type setting struct {
	key    string   // config-file key, dotted: "s3.endpoint"
	flag   string   // command-line flag, "" when none (secrets have none)
	env    []string // environment variables, first set wins
	def    string
	usage  string
	secret bool
	// boolean settings are switches on the command line (--s3-path-style,
	// --s3-path-style=false); choices lists the values a setting allows.
	boolean bool
	choices []string
	// duration settings take a Go duration above zero (30s, 1m30s).
	duration bool
}

func (s setting) isBool() bool { return s.boolean }

// check refuses a value the setting cannot take, wherever it came from.
func (s setting) check(v, source string) error {
	if s.boolean {
		if _, ok := parseBool(v); !ok {
			return fmt.Errorf("%s = %q (%s): want true or false", s.key, v, source)
		}
	}
	if s.duration {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return fmt.Errorf("%s = %q (%s): want a duration above zero such as 30s, 2m or 1m30s", s.key, v, source)
		}
	}
	if len(s.choices) > 0 && !slices.Contains(s.choices, v) {
		return fmt.Errorf("%s = %q (%s): want %s", s.key, v, source, strings.Join(s.choices, ", "))
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

var settingsTable = []setting{
	{key: "data", flag: "data", env: []string{"ENGRAM_DATA"}, usage: "data directory of the embedded stores (default $XDG_DATA_HOME/engram)"},
	{key: "archive", flag: "archive", env: []string{"ENGRAM_ARCHIVE"}, def: "dir", usage: "archive backend: dir (embedded) or s3", choices: []string{"dir", "s3"}},
	{key: "index", flag: "index", env: []string{"ENGRAM_INDEX"}, def: "sqlite", usage: "index backend: sqlite (embedded) or opensearch", choices: []string{"sqlite", "opensearch"}},
	{key: "tenant", flag: "tenant", env: []string{"ENGRAM_TENANT"}, usage: "scope every read and write to this tenant"},
	{key: "search.rank_window", flag: "rank-window", env: []string{"ENGRAM_RANK_WINDOW"}, def: "2000", usage: "a search with words ranks the newest N matches by relevance; all ranks every match (slow for common words on the embedded index)"},
	{key: "s3.endpoint", flag: "s3-endpoint", env: []string{"S3_ENDPOINT"}, usage: "S3 endpoint, host:port or URL (empty: AWS)"},
	{key: "s3.bucket", flag: "s3-bucket", env: []string{"S3_BUCKET"}, usage: "S3 bucket of the archive"},
	{key: "s3.region", flag: "s3-region", env: []string{"S3_REGION", "AWS_REGION"}, usage: "S3 region"},
	{key: "s3.access_key", flag: "s3-access-key", env: []string{"S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"}, usage: "S3 access key id"},
	{key: "s3.secret_key", env: []string{"S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"}, secret: true, usage: "S3 secret key (environment or file only)"},
	{key: "s3.secret_key_file", flag: "s3-secret-key-file", env: []string{"ENGRAM_S3_SECRET_KEY_FILE"}, usage: "file holding the S3 secret key"},
	{key: "s3.create_bucket", flag: "s3-create-bucket", env: []string{"ENGRAM_S3_CREATE_BUCKET"}, def: "false", usage: "create the bucket when it does not exist", boolean: true},
	{key: "s3.path_style", flag: "s3-path-style", env: []string{"S3_FORCE_PATH_STYLE"}, def: "true", usage: "path-style bucket addressing (true for most self-hosted servers)", boolean: true},
	{key: "s3.tls", flag: "s3-tls", env: []string{"ENGRAM_S3_TLS"}, usage: "use TLS to S3 (default: from the endpoint URL's scheme, else true)", boolean: true},
	{key: "s3.ca_file", flag: "s3-ca", env: []string{"ENGRAM_S3_CA_FILE"}, usage: "PEM CA bundle trusted for S3"},
	{key: "s3.insecure_skip_verify", flag: "s3-insecure-skip-verify", env: []string{"ENGRAM_S3_INSECURE_SKIP_VERIFY"}, def: "false", usage: "INSECURE: do not verify S3's TLS certificate (testing only)", boolean: true},
	{key: "opensearch.url", flag: "opensearch-url", env: []string{"OPENSEARCH_URL"}, usage: "OpenSearch URL(s), comma-separated"},
	{key: "opensearch.username", flag: "opensearch-username", env: []string{"OPENSEARCH_USERNAME"}, usage: "OpenSearch user"},
	{key: "opensearch.password", env: []string{"OPENSEARCH_PASSWORD"}, secret: true, usage: "OpenSearch password (environment or file only)"},
	{key: "opensearch.password_file", flag: "opensearch-password-file", env: []string{"ENGRAM_OPENSEARCH_PASSWORD_FILE"}, usage: "file holding the OpenSearch password"},
	{key: "opensearch.ca_file", flag: "opensearch-ca", env: []string{"ENGRAM_OPENSEARCH_CA_FILE"}, usage: "PEM CA bundle trusted for OpenSearch"},
	{key: "opensearch.insecure_skip_verify", flag: "opensearch-insecure-skip-verify", env: []string{"ENGRAM_OPENSEARCH_INSECURE_SKIP_VERIFY"}, def: "false", usage: "INSECURE: do not verify OpenSearch's TLS certificate (testing only)", boolean: true},
	{key: "opensearch.index", flag: "opensearch-index", env: []string{"ENGRAM_OPENSEARCH_INDEX"}, def: "experience_events", usage: "OpenSearch index name"},
	{key: "opensearch.knn_engine", flag: "opensearch-knn-engine", env: []string{"ENGRAM_OPENSEARCH_KNN_ENGINE"}, def: "lucene", usage: "k-NN engine of an index engram creates (lucene needs no native library)", choices: []string{"lucene", "faiss", "nmslib"}},
	{key: "opensearch.refresh", flag: "opensearch-refresh", env: []string{"ENGRAM_OPENSEARCH_REFRESH"}, def: "false", usage: "refresh policy of bulk writes: false, true or wait_for", choices: []string{"false", "true", "wait_for"}},
	{key: "opensearch.timeout", flag: "opensearch-timeout", env: []string{"ENGRAM_OPENSEARCH_TIMEOUT"}, def: "30s", usage: "OpenSearch request timeout"},
	{key: "kafka.brokers", flag: "kafka-brokers", env: []string{"KAFKA_BROKERS", "KAFKA_BOOTSTRAP_SERVER"}, usage: "Kafka brokers, host:port comma-separated: notifications go to Kafka, and worker/produce/tail --topic use it"},
	{key: "kafka.client_id", flag: "kafka-client-id", env: []string{"ENGRAM_KAFKA_CLIENT_ID"}, def: "engram", usage: "Kafka client id"},
	{key: "kafka.compression", flag: "kafka-compression", env: []string{"ENGRAM_KAFKA_COMPRESSION"}, def: "gzip", usage: "compression of the messages engram produces: gzip (the source system's), snappy, lz4, zstd or none"},
	{key: "kafka.group", flag: "kafka-group", env: []string{"KAFKA_GROUP_ID"}, def: "ingestion-workers", usage: "consumer group of engram worker"},
	{key: "kafka.topic_raw", flag: "kafka-topic-raw", env: []string{"ENGRAM_KAFKA_TOPIC_RAW"}, def: "experience.raw", usage: "topic of incoming events"},
	{key: "kafka.topic_enriched", flag: "kafka-topic-enriched", env: []string{"ENGRAM_KAFKA_TOPIC_ENRICHED"}, def: "experience.enriched", usage: "topic of experience.enriched notifications"},
	{key: "kafka.topic_indexed", flag: "kafka-topic-indexed", env: []string{"ENGRAM_KAFKA_TOPIC_INDEXED"}, def: "memory.indexed", usage: "topic of memory.indexed notifications"},
	{key: "kafka.topic_audit", flag: "kafka-topic-audit", env: []string{"ENGRAM_KAFKA_TOPIC_AUDIT"}, def: "audit.events", usage: "audit mirror of every message engram publishes (empty: no mirror)"},
	{key: "kafka.topic_rejected", flag: "kafka-topic-rejected", env: []string{"ENGRAM_KAFKA_TOPIC_REJECTED"}, def: "experience.raw.rejected", usage: "topic of raw messages the worker rejects"},
	{key: "kafka.security_protocol", flag: "kafka-security-protocol", env: []string{"KAFKA_SECURITY_PROTOCOL"}, usage: "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (default: SSL when kafka.tls is set)", choices: []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}},
	{key: "kafka.tls", flag: "kafka-tls", env: []string{"KAFKA_SSL"}, def: "false", usage: "use TLS to the brokers", boolean: true},
	{key: "kafka.ca_file", flag: "kafka-ca", env: []string{"ENGRAM_KAFKA_CA_FILE"}, usage: "PEM CA bundle trusted for the brokers"},
	{key: "kafka.ca_pem", env: []string{"KAFKA_CA_CERT"}, usage: "PEM CA certificate text (the source system's KAFKA_CA_CERT)"},
	{key: "kafka.cert_file", flag: "kafka-cert", env: []string{"ENGRAM_KAFKA_CERT_FILE"}, usage: "PEM client certificate for mutual TLS"},
	{key: "kafka.cert_pem", env: []string{"KAFKA_ACCESS_CERT"}, usage: "PEM client certificate text (KAFKA_ACCESS_CERT)"},
	{key: "kafka.key_file", flag: "kafka-key", env: []string{"ENGRAM_KAFKA_KEY_FILE"}, usage: "PEM key of the client certificate"},
	{key: "kafka.key_pem", env: []string{"KAFKA_ACCESS_KEY"}, secret: true, usage: "PEM client key text (KAFKA_ACCESS_KEY; environment only)"},
	{key: "kafka.sasl_mechanism", flag: "kafka-sasl-mechanism", env: []string{"KAFKA_SASL_MECHANISM"}, usage: "SASL: plain, scram-sha-256 or scram-sha-512", choices: []string{"plain", "scram-sha-256", "scram-sha-512"}},
	{key: "kafka.sasl_username", flag: "kafka-sasl-username", env: []string{"KAFKA_SASL_USERNAME"}, usage: "SASL user"},
	{key: "kafka.sasl_password", env: []string{"KAFKA_SASL_PASSWORD"}, secret: true, usage: "SASL password (environment or file only)"},
	{key: "kafka.sasl_password_file", flag: "kafka-sasl-password-file", env: []string{"ENGRAM_KAFKA_SASL_PASSWORD_FILE"}, usage: "file holding the SASL password"},
	{key: "kafka.session_timeout", flag: "kafka-session-timeout", env: []string{"ENGRAM_KAFKA_SESSION_TIMEOUT"}, def: "45s", usage: "a worker that stops heartbeating (killed) leaves the group after this long, and its partitions move on (at least 6s)"},
	{key: "worker.health_port", flag: "health-port", env: []string{"HEALTH_PORT", "PORT"}, usage: "port of engram worker's GET /health and GET /metrics on localhost (empty: no server)"},
	{key: "worker.health_addr", flag: "health-addr", env: []string{"ENGRAM_HEALTH_ADDR"}, def: "127.0.0.1", usage: "address the health server listens on"},
	{key: "worker.disable_health", env: []string{"DISABLE_HEALTH_SERVER"}, def: "false", usage: "no health server even when a port is set", boolean: true},
	{key: "embedder.kind", flag: "embedder", env: []string{"ENGRAM_EMBEDDER"}, def: "stub", usage: "embedder: stub (offline, deterministic) or http (OpenAI-compatible)", choices: []string{"stub", "http"}},
	{key: "embedder.endpoint", flag: "embedder-endpoint", env: []string{"ENGRAM_EMBEDDER_ENDPOINT"}, usage: "embeddings endpoint URL (http embedder)"},
	{key: "embedder.model", flag: "embedder-model", env: []string{"ENGRAM_EMBEDDER_MODEL"}, def: "text-embedding-3-small", usage: "embedding model (http embedder)"},
	{key: "embedder.dimension", flag: "embed-dim", env: []string{"ENGRAM_EMBEDDER_DIMENSION"}, usage: "embedding dimension (default 8 for stub, 1536 for http)"},
	{key: "embedder.api_key", env: []string{"ENGRAM_EMBEDDER_API_KEY", "OPENAI_API_KEY"}, secret: true, usage: "embedder API key (environment or file only)"},
	{key: "embedder.api_key_file", flag: "embedder-api-key-file", env: []string{"ENGRAM_EMBEDDER_API_KEY_FILE"}, usage: "file holding the embedder API key"},
	// OpenTelemetry: the standard variables, signal-specific ones first as
	// the specification orders them. No endpoint: no spans, no cost.
	{key: "otel.endpoint", flag: "otel-endpoint", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT"}, usage: "OTLP collector base URL for spans, e.g. http://localhost:4318 (/v1/traces is added over HTTP); empty: no spans"},
	{key: "otel.traces_endpoint", flag: "otel-traces-endpoint", env: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}, usage: "OTLP traces URL, used as given (wins over otel.endpoint)"},
	{key: "otel.protocol", flag: "otel-protocol", env: []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}, def: "http/protobuf", usage: "OTLP transport: http/protobuf or grpc", choices: []string{"http/protobuf", "grpc"}},
	{key: "otel.headers", env: []string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"}, secret: true, usage: "headers of OTLP requests, key=value,... (environment or file only)"},
	{key: "otel.headers_file", flag: "otel-headers-file", env: []string{"ENGRAM_OTEL_HEADERS_FILE"}, usage: "file holding the OTLP headers"},
	{key: "otel.service_name", flag: "otel-service-name", env: []string{"OTEL_SERVICE_NAME"}, def: "engram", usage: "service.name of engram's spans"},
	{key: "otel.resource_attributes", flag: "otel-resource-attributes", env: []string{"OTEL_RESOURCE_ATTRIBUTES"}, usage: "resource attributes of engram's spans, key=value,..."},
	{key: "otel.traces_sampler", flag: "otel-traces-sampler", env: []string{"OTEL_TRACES_SAMPLER"}, def: "parentbased_always_on", usage: "span sampler", choices: []string{"parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio", "always_on", "always_off", "traceidratio"}},
	{key: "otel.traces_sampler_arg", flag: "otel-traces-sampler-arg", env: []string{"OTEL_TRACES_SAMPLER_ARG"}, usage: "the sampler's ratio, 0 to 1 (traceidratio samplers)"},
	{key: "otel.sdk_disabled", flag: "otel-sdk-disabled", env: []string{"OTEL_SDK_DISABLED"}, def: "false", usage: "export no spans whatever the endpoint", boolean: true},
	{key: "otel.stage_spans", flag: "otel-stage-spans", env: []string{"ENGRAM_OTEL_STAGE_SPANS"}, def: "all", usage: "child spans of experience.ingest: all (every stage) or main (embed, objectstore.put, opensearch.index; the other stages' durations as attributes of the root: half the spans)", choices: []string{"all", "main"}},
	{key: "ui.hop_timeout", flag: "hop-timeout", env: []string{"ENGRAM_HOP_TIMEOUT"}, def: "30s", duration: true, usage: "the inspector's send to the raw topic (ctrl+p in the record form): how long each next hop may take before it is shown stuck"},
	{key: "trace.url", flag: "trace-url", env: []string{"ENGRAM_TRACE_URL"}, usage: "link from an event to its trace in the inspector: {traceId} (and {spanId}) replaced, e.g. http://localhost:16686/trace/{traceId}"},
}

// resolved is the effective configuration: every key's value and where it
// came from.
type resolved struct {
	values  map[string]string
	sources map[string]string
	profile string
	file    string
}

func (r *resolved) get(key string) string { return r.values[key] }

func (r *resolved) bool(key string) bool {
	v, _ := parseBool(r.values[key])
	return v
}

// common holds what every command parses: the config file and profile, and
// one flag per non-secret setting.
type common struct {
	configFile, profile string
}

func (c *common) bind(fs *flag.FlagSet) {
	fs.StringVar(&c.configFile, "config", "", "config file (default $XDG_CONFIG_HOME/engram/config.toml)")
	fs.StringVar(&c.profile, "profile", "", "profile of the config file to use (default: the file's `profile` key, else \"default\")")
	for _, s := range settingsTable {
		if s.flag != "" {
			fs.Var(&flagValue{v: s.def, isBool: s.isBool()}, s.flag, s.usage)
		}
	}
}

// resolve layers defaults < profile < environment < flags.
func (c *common) resolve(fs *flag.FlagSet, getenv func(string) string) (*resolved, error) {
	r := &resolved{values: map[string]string{}, sources: map[string]string{}}
	for _, s := range settingsTable {
		if s.def != "" {
			r.values[s.key], r.sources[s.key] = s.def, "default"
		}
	}
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
	for _, s := range settingsTable {
		if v, ok := r.values[s.key]; ok && v != "" {
			if err := s.check(v, r.sources[s.key]); err != nil {
				return nil, err
			}
		}
	}
	return r, r.readSecretFiles()
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
	for _, s := range settingsTable {
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
