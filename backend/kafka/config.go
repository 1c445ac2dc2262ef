package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Default names, as the source system runs them (docs/data-contract.md,
// Kafka, as the source system runs it).
const (
	defaultClientID      = "engram"
	defaultGroup         = "ingestion-workers"
	defaultTopicRaw      = "experience.raw"
	defaultTopicEnriched = "experience.enriched"
	defaultTopicIndexed  = "memory.indexed"
	defaultTopicAudit    = "audit.events"
	defaultTopicRejected = "experience.raw.rejected"
	defaultTopicFeedback = "memory.feedback"

	// defaultDeliveryTimeout bounds how long a produce may take, retries
	// included: franz-go would otherwise retry forever through an outage.
	defaultDeliveryTimeout = 30 * time.Second
	// defaultDialTimeout bounds one connection attempt to a broker.
	defaultDialTimeout = 10 * time.Second
)

// SASL mechanisms, spelled as KAFKA_SASL_MECHANISM spells them.
const (
	saslPlain       = "plain"
	saslScramSHA256 = "scram-sha-256"
	saslScramSHA512 = "scram-sha-512"
)

// Config says where the brokers are, how to reach them and which topics and
// group to use. The zero value of a field means its default (see
// WithDefaults), except Topics.Audit: empty there means no audit mirror.
type Config struct {
	Brokers  []string // host:port of the seed brokers; required
	ClientID string   // default "engram"
	Group    string   // consumer group of the worker; default "ingestion-workers"
	Topics   Topics
	TLS      TLS
	SASL     SASL
	// DeliveryTimeout bounds each produce (Publish, ProduceRaw, Reject),
	// retries included; default 30 s.
	DeliveryTimeout time.Duration
	// DialTimeout bounds each connection attempt; default 10 s.
	DialTimeout time.Duration
	// Compression of the batches engram produces: gzip (the source
	// system's, the default), snappy, lz4, zstd or none. Every Kafka
	// client reads them all; the broker decompresses each batch to check
	// it, and gzip costs it (and engram) the most CPU.
	Compression string
	// Registry is the schema registry Avro values are read through (and
	// `produce --format avro` registers its schema in). None: Avro values
	// are errors of their own, JSON is read as ever.
	Registry SchemaRegistry
}

// compressions are the codecs Config.Compression may name.
var compressions = []string{"gzip", "snappy", "lz4", "zstd", "none"}

// Topics names the topics engram reads and writes.
type Topics struct {
	Raw      string // incoming events; default experience.raw
	Enriched string // default experience.enriched
	Indexed  string // default memory.indexed
	// Audit receives a copy of every notification and rejection published,
	// as {"originalTopic", "payload", "timestamp"}. Empty: no mirror. The
	// default config (defaultConfig, fromEnv) sets audit.events, as the
	// source system has its mirror on by default.
	Audit    string
	Rejected string // raw records the worker gave up on; default experience.raw.rejected
	// Feedback is the source system's memory.feedback topic, which engram
	// only reads (the Topics view). Empty: not watched.
	Feedback string
}

// TLS configures TLS to the brokers. It is on when Enabled is set or any
// certificate is given. Each certificate may come as a file or as PEM text
// (the source system passes PEM strings in KAFKA_CA_CERT, KAFKA_ACCESS_CERT
// and KAFKA_ACCESS_KEY); setting both forms of one is an error.
type TLS struct {
	Enabled bool
	// CA verifies the brokers; without one the system roots are used.
	CAFile, CAPEM string
	// A client certificate and its key, for mutual TLS: both or neither.
	CertFile, CertPEM string
	KeyFile, KeyPEM   string
	// ServerName overrides the name verified in the broker certificates
	// (default: the host of the broker address).
	ServerName string
}

// SASL configures SASL authentication. Mechanism empty means none.
type SASL struct {
	Mechanism string // "plain", "scram-sha-256" or "scram-sha-512"
	User      string
	Password  string
}

// defaultConfig is the configuration of the source system with engram's
// client id, for the given brokers.
func defaultConfig(brokers ...string) Config {
	c := Config{Brokers: brokers}.WithDefaults()
	c.Topics.Audit = defaultTopicAudit
	return c
}

// WithDefaults returns c with every empty field but Topics.Audit set to its
// default.
func (c Config) WithDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.ClientID, defaultClientID)
	def(&c.Group, defaultGroup)
	def(&c.Topics.Raw, defaultTopicRaw)
	def(&c.Topics.Enriched, defaultTopicEnriched)
	def(&c.Topics.Indexed, defaultTopicIndexed)
	def(&c.Topics.Rejected, defaultTopicRejected)
	c.Compression = strings.ToLower(strings.TrimSpace(c.Compression))
	def(&c.Compression, "gzip")
	if c.DeliveryTimeout <= 0 {
		c.DeliveryTimeout = defaultDeliveryTimeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = defaultDialTimeout
	}
	c.SASL.Mechanism = strings.ToLower(strings.TrimSpace(c.SASL.Mechanism))
	return c
}

// fromEnv reads the source system's Kafka settings (docs/data-contract.md,
// Kafka): KAFKA_BROKERS, KAFKA_CLIENT_ID, KAFKA_GROUP_ID, KAFKA_SSL and
// KAFKA_SECURITY_PROTOCOL, the PEM texts and the SASL ones. getenv is
// os.Getenv in production; the result has its defaults set and is validated.
func fromEnv(getenv func(string) string) (Config, error) {
	c := defaultConfig()
	brokers := getenv("KAFKA_BROKERS")
	if brokers == "" {
		brokers = getenv("KAFKA_BOOTSTRAP_SERVER")
	}
	for b := range strings.SplitSeq(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Brokers = append(c.Brokers, b)
		}
	}
	if v := getenv("KAFKA_CLIENT_ID"); v != "" {
		c.ClientID = v
	}
	if v := getenv("KAFKA_GROUP_ID"); v != "" {
		c.Group = v
	}
	proto := strings.ToUpper(getenv("KAFKA_SECURITY_PROTOCOL"))
	c.TLS.Enabled = strings.EqualFold(getenv("KAFKA_SSL"), "true") || proto == "SSL" || proto == "SASL_SSL"
	c.TLS.CAPEM = getenv("KAFKA_CA_CERT")
	c.TLS.CertPEM = getenv("KAFKA_ACCESS_CERT")
	c.TLS.KeyPEM = getenv("KAFKA_ACCESS_KEY")
	c.SASL = SASL{Mechanism: getenv("KAFKA_SASL_MECHANISM"), User: getenv("KAFKA_SASL_USERNAME"), Password: getenv("KAFKA_SASL_PASSWORD")}
	c = c.WithDefaults()
	return c, c.Validate()
}

// Validate reports every problem of c (after WithDefaults) at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("kafka: no brokers (set KAFKA_BROKERS to host:port[,host:port...])"))
	}
	for _, b := range c.Brokers {
		if i := strings.LastIndexByte(b, ':'); i <= 0 || i == len(b)-1 || strings.ContainsAny(b, "/ ") {
			errs = append(errs, fmt.Errorf("kafka: broker %q is not host:port", b))
		}
	}
	topics := map[string]string{}
	for _, t := range []struct{ field, name string }{
		{"raw", c.Topics.Raw}, {"enriched", c.Topics.Enriched}, {"indexed", c.Topics.Indexed},
		{"audit", c.Topics.Audit}, {"rejected", c.Topics.Rejected},
	} {
		if t.name == "" {
			if t.field != "audit" {
				errs = append(errs, fmt.Errorf("kafka: the %s topic has no name", t.field))
			}
			continue
		}
		if err := validTopic(t.name); err != nil {
			errs = append(errs, fmt.Errorf("kafka: %s topic: %w", t.field, err))
		}
		if other, ok := topics[t.name]; ok {
			errs = append(errs, fmt.Errorf("kafka: the %s and %s topics are both %q", other, t.field, t.name))
		}
		topics[t.name] = t.field
	}
	if !slices.Contains(compressions, c.Compression) {
		errs = append(errs, fmt.Errorf("kafka: compression %q: want one of %s", c.Compression, strings.Join(compressions, ", ")))
	}
	if c.TLS.CAFile != "" && c.TLS.CAPEM != "" {
		errs = append(errs, errors.New("kafka: TLS CA given both as a file and as PEM; give one"))
	}
	if c.TLS.CertFile != "" && c.TLS.CertPEM != "" || c.TLS.KeyFile != "" && c.TLS.KeyPEM != "" {
		errs = append(errs, errors.New("kafka: TLS client certificate or key given both as a file and as PEM; give one"))
	}
	if hasCert, hasKey := c.TLS.CertFile != "" || c.TLS.CertPEM != "", c.TLS.KeyFile != "" || c.TLS.KeyPEM != ""; hasCert != hasKey {
		errs = append(errs, errors.New("kafka: TLS client certificate and key go together (KAFKA_ACCESS_CERT and KAFKA_ACCESS_KEY): one is missing"))
	}
	if c.TLS.on() {
		if _, err := c.TLS.config(); err != nil {
			errs = append(errs, err)
		}
	}
	switch c.SASL.Mechanism {
	case "":
		if c.SASL.User != "" || c.SASL.Password != "" {
			errs = append(errs, errors.New("kafka: SASL user or password given without a mechanism (KAFKA_SASL_MECHANISM: plain, scram-sha-256, scram-sha-512)"))
		}
	case saslPlain, saslScramSHA256, saslScramSHA512:
		if c.SASL.User == "" || c.SASL.Password == "" {
			errs = append(errs, fmt.Errorf("kafka: SASL %s needs a user and a password (KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD)", c.SASL.Mechanism))
		}
	default:
		errs = append(errs, fmt.Errorf("kafka: unknown SASL mechanism %q (want plain, scram-sha-256 or scram-sha-512)", c.SASL.Mechanism))
	}
	if c.DeliveryTimeout < 0 || c.DialTimeout < 0 || c.Registry.Timeout < 0 {
		errs = append(errs, errors.New("kafka: negative timeout"))
	}
	if err := c.Registry.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validTopic applies Kafka's rules for topic names.
func validTopic(name string) error {
	if name == "." || name == ".." {
		return fmt.Errorf("%q is not a valid topic name", name)
	}
	if len(name) > 249 {
		return fmt.Errorf("topic name %.20q... is longer than 249 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic name %q has %q (only letters, digits, '.', '_' and '-')", name, r)
		}
	}
	return nil
}

// String describes c for logs and start-up banners. It never contains the
// SASL password or any TLS key material.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kafka brokers=%s client=%s group=%s topics=raw:%s,enriched:%s,indexed:%s,rejected:%s",
		strings.Join(c.Brokers, ","), c.ClientID, c.Group, c.Topics.Raw, c.Topics.Enriched, c.Topics.Indexed, c.Topics.Rejected)
	if c.Topics.Audit != "" {
		fmt.Fprintf(&b, ",audit:%s", c.Topics.Audit)
	} else {
		b.WriteString(" (no audit mirror)")
	}
	fmt.Fprintf(&b, " %s %s", c.TLS, c.SASL)
	if c.Registry.URL != "" {
		fmt.Fprintf(&b, " %s", c.Registry)
	}
	return b.String()
}

// GoString is String, so that %#v does not print the secrets either.
func (c Config) GoString() string { return c.String() }

// LogValue is String, for log/slog.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// String says whether TLS is on and where its certificates come from,
// never their content.
func (t TLS) String() string {
	if !t.on() {
		return "tls=off"
	}
	src := func(file, pem string) string {
		switch {
		case file != "":
			return "file " + file
		case pem != "":
			return "pem"
		}
		return ""
	}
	s := "tls=on"
	if ca := src(t.CAFile, t.CAPEM); ca != "" {
		s += " ca=" + ca
	} else {
		s += " ca=system"
	}
	if cert := src(t.CertFile, t.CertPEM); cert != "" {
		s += " client-cert=" + cert
		if k := src(t.KeyFile, t.KeyPEM); k != "" {
			s += " key=" + k
		}
	}
	if t.ServerName != "" {
		s += " server-name=" + t.ServerName
	}
	return s
}

// GoString is String.
func (t TLS) GoString() string { return t.String() }

// String names the mechanism and user, never the password.
func (s SASL) String() string {
	if s.Mechanism == "" && s.User == "" && s.Password == "" {
		return "sasl=off"
	}
	pw := "unset"
	if s.Password != "" {
		pw = "set"
	}
	return fmt.Sprintf("sasl=%s user=%s password=%s", s.Mechanism, s.User, pw)
}

// GoString is String.
func (s SASL) GoString() string { return s.String() }

func (t TLS) on() bool {
	return t.Enabled || t.CAFile != "" || t.CAPEM != "" || t.CertFile != "" || t.CertPEM != "" || t.KeyFile != "" || t.KeyPEM != ""
}

// config builds the crypto/tls configuration; errors never quote the PEM.
func (t TLS) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	read := func(what, file, pem string) ([]byte, error) {
		if file == "" {
			return []byte(pem), nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("kafka: TLS %s: %w", what, err)
		}
		return b, nil
	}
	if t.CAFile != "" || t.CAPEM != "" {
		ca, err := read("CA", t.CAFile, t.CAPEM)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("kafka: TLS CA (%s) holds no PEM certificate", t.srcName(t.CAFile, "KAFKA_CA_CERT"))
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" || t.CertPEM != "" || t.KeyFile != "" || t.KeyPEM != "" {
		cert, err := read("client certificate", t.CertFile, t.CertPEM)
		if err != nil {
			return nil, err
		}
		key, err := read("client key", t.KeyFile, t.KeyPEM)
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			// The error of X509KeyPair names what is wrong without the key.
			return nil, fmt.Errorf("kafka: TLS client certificate (%s) and key (%s): %w",
				t.srcName(t.CertFile, "KAFKA_ACCESS_CERT"), t.srcName(t.KeyFile, "KAFKA_ACCESS_KEY"), err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func (TLS) srcName(file, env string) string {
	if file != "" {
		return file
	}
	return "PEM, " + env
}

func (s SASL) mechanism() sasl.Mechanism {
	switch s.Mechanism {
	case saslPlain:
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism()
	case saslScramSHA256:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism()
	case saslScramSHA512:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism()
	}
	return nil
}

// clientOpts are the options every franz-go client of this package shares.
func (c Config) clientOpts() ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID(c.ClientID),
		kgo.DialTimeout(c.DialTimeout),
		// No kgo.AllowAutoTopicCreation: topics are created by an explicit
		// command (CreateTopics), never as a side effect of producing.
	}
	if c.TLS.on() {
		tc, err := c.TLS.config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if m := c.SASL.mechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// producerOpts: acks=all and idempotence are franz-go's defaults; the
// configured compression (gzip as the source system by default, its level
// by batch size: sizedGzip); a bounded delivery so an outage is an error.
func (c Config) producerOpts() ([]kgo.Opt, error) {
	compress := kgo.ProducerBatchCompression(c.codec())
	if c.Compression == "gzip" {
		gz, err := newSizedGzip()
		if err != nil {
			return nil, err
		}
		compress = kgo.WithCompressor(gz)
	}
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		compress,
		kgo.RecordDeliveryTimeout(c.DeliveryTimeout),
		// Every produce hands over whole batches and waits for their
		// acknowledgement: lingering for more records only delays it (10
		// ms a batch by default, a sixth of the worker's publish step).
		kgo.ProducerLinger(0),
		// A missing topic fails after a few metadata refreshes (~ seconds),
		// not after the delivery timeout.
		kgo.UnknownTopicRetries(3),
	}, nil
}

// codec is Compression's franz-go codec (Validate refuses other names).
func (c Config) codec() kgo.CompressionCodec {
	switch c.Compression {
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	case "none":
		return kgo.NoCompression()
	}
	return kgo.GzipCompression()
}

func (c Config) prepare() (Config, error) {
	c = c.WithDefaults()
	return c, c.Validate()
}
