package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// Record formats: how a record's value was written.
const (
	formatJSON = "json" // anything that does not start with the magic byte
	FormatAvro = "avro" // the schema registry's wire format
)

// ExperienceEventSchema is the Avro schema of the experience event
// (experience-event.avsc beside this file): `engram produce --format avro`
// registers it unless given another.
//
//go:embed experience-event.avsc
var ExperienceEventSchema string

// defaultRegistryTimeout bounds one request to the schema registry.
const defaultRegistryTimeout = 10 * time.Second

// registryRetryAfter: after a failed schema lookup (the registry down, or
// the id unknown to it) the same id is not asked for again before this
// long; the messages meanwhile get the same error at once, instead of each
// waiting for a timeout.
const registryRetryAfter = 5 * time.Second

// SchemaRegistry says where the schema registry (Confluent's REST API;
// Apicurio serves it under /apis/ccompat/v7) is. URL empty: none; an Avro
// message is then an error of its own ("no schema registry configured").
type SchemaRegistry struct {
	URL      string
	User     string
	Password string
	// CAFile is a PEM bundle trusted for an https registry, beside (not
	// instead of) the system roots.
	CAFile string
	// Timeout bounds each request; default 10 s.
	Timeout time.Duration
}

// String names the registry and its user, never the password.
func (s SchemaRegistry) String() string {
	if s.URL == "" {
		return "schema-registry=none"
	}
	out := "schema-registry=" + s.URL
	if s.User != "" {
		pw := "unset"
		if s.Password != "" {
			pw = "set"
		}
		out += fmt.Sprintf(" user=%s password=%s", s.User, pw)
	}
	if s.CAFile != "" {
		out += " ca=file " + s.CAFile
	}
	return out
}

// GoString is String.
func (s SchemaRegistry) GoString() string { return s.String() }

func (s SchemaRegistry) validate() error {
	if s.URL == "" {
		if s.User != "" || s.Password != "" {
			return errors.New("kafka: schema registry user or password given without a URL (kafka.schema_registry_url)")
		}
		return nil
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("kafka: schema registry URL %q is not an http(s) URL", redactURL(s.URL))
	}
	if u.User != nil {
		return errors.New("kafka: schema registry URL holds credentials: give them as kafka.schema_registry_username and _password")
	}
	if (s.User == "") != (s.Password == "") {
		return errors.New("kafka: schema registry user and password go together: one is missing")
	}
	return nil
}

// registryTLS trusts the system roots and the certificates of caFile.
func registryTLS(caFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("kafka: schema registry CA: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("kafka: schema registry CA %s holds no PEM certificate", caFile)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, nil
}

func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	return s
}

// DecodeError is why the value of one record could not be read: a
// message's own problem, never the partition's. The worker rejects the
// record with Error() as the reason.
type DecodeError struct {
	SchemaID int    // 0 when the header itself is bad
	Registry string // the registry's URL, when it was asked
	Kind     DecodeProblem
	Err      error
}

// DecodeProblem tells the kinds of DecodeError apart.
type DecodeProblem int

// The kinds of DecodeError.
const (
	decodeBadHeader     DecodeProblem = iota // 0x00 but no 5-byte header
	decodeNoRegistry                         // no registry configured
	decodeUnknownSchema                      // the registry does not know the id
	decodeRegistryDown                       // the registry did not answer (or failed)
	decodeBadSchema                          // the registry's schema is not Avro we can read
	decodeBadBody                            // the body does not decode with the schema
)

func (e *DecodeError) Error() string {
	id := fmt.Sprintf("schema id %d", e.SchemaID)
	var msg string
	switch e.Kind {
	case decodeBadHeader:
		msg = "avro: the value starts with the schema registry's magic byte 0x00 but has no 5-byte header (magic byte, 4-byte schema id)"
	case decodeNoRegistry:
		msg = "avro: " + id + ": no schema registry configured (set kafka.schema_registry_url) to read Avro messages"
	case decodeUnknownSchema:
		msg = "avro: " + id + " is unknown to the schema registry " + e.Registry
	case decodeRegistryDown:
		msg = "avro: " + id + ": schema registry " + e.Registry + " unavailable"
	case decodeBadSchema:
		msg = "avro: " + id + ": the registry's schema cannot be used"
	case decodeBadBody:
		msg = "avro: " + id + ": the body does not decode with its schema"
	}
	if e.Err != nil {
		msg += ": " + oneLine(e.Err.Error())
	}
	return msg
}

func (e *DecodeError) Unwrap() error { return e.Err }

// AvroCodec reads and writes the schema registry's wire format: byte 0x00,
// the schema id (4 bytes, big-endian), the Avro binary body. Each schema
// is fetched from the registry once per id and kept (in an sr.Serde). It
// is safe for concurrent use.
type AvroCodec struct {
	reg   SchemaRegistry
	cl    *sr.Client // nil without a registry
	serde *sr.Serde

	mu     sync.Mutex
	fetch  map[int]*sync.Mutex // one lookup per id at a time
	failed map[int]failedLookup
}

type failedLookup struct {
	err   *DecodeError
	until time.Time
}

// NewAvroCodec makes a codec for the registry (URL empty: every Avro
// message is a decodeNoRegistry error).
func NewAvroCodec(reg SchemaRegistry) (*AvroCodec, error) {
	if err := reg.validate(); err != nil {
		return nil, err
	}
	c := &AvroCodec{reg: reg, serde: sr.NewSerde(), fetch: map[int]*sync.Mutex{}, failed: map[int]failedLookup{}}
	if reg.URL == "" {
		return c, nil
	}
	if reg.Timeout <= 0 {
		reg.Timeout = defaultRegistryTimeout
	}
	opts := []sr.ClientOpt{
		sr.URLs(strings.TrimRight(reg.URL, "/")),
		sr.HTTPClient(&http.Client{Timeout: reg.Timeout}),
		sr.UserAgent("engram"),
	}
	if reg.User != "" {
		opts = append(opts, sr.BasicAuth(reg.User, reg.Password))
	}
	if reg.CAFile != "" {
		tc, err := registryTLS(reg.CAFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sr.DialTLSConfig(tc))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: schema registry: %w", err)
	}
	c.reg, c.cl = reg, cl
	return c, nil
}

// isWire reports whether value is in the registry's wire format (it starts
// with the magic byte 0x00, which no JSON text does).
func isWire(value []byte) bool { return len(value) > 0 && value[0] == 0 }

// splitWire returns the schema id and the body of a wire-format value.
func splitWire(value []byte) (id int, body []byte, err error) {
	var h sr.ConfluentHeader
	id, body, err = h.DecodeID(value)
	if err != nil {
		return 0, nil, &DecodeError{Kind: decodeBadHeader}
	}
	return id, body, nil
}

// Decode turns a wire-format value into the event's JSON (see avroToJSON),
// or explains in a *DecodeError why it cannot.
func (c *AvroCodec) Decode(ctx context.Context, value []byte) (event []byte, schemaID int, err error) {
	id, _, err := splitWire(value)
	if err != nil {
		return nil, 0, err
	}
	var out jsonValue
	err = c.serde.Decode(value, &out)
	if errors.Is(err, sr.ErrNotRegistered) {
		if err = c.learn(ctx, id); err == nil {
			err = c.serde.Decode(value, &out)
		}
	}
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			err = &DecodeError{SchemaID: id, Kind: decodeBadBody, Err: err}
		}
		return nil, id, err
	}
	return out, id, nil
}

// jsonValue is what the Serde decodes a registered id into.
type jsonValue []byte

// learn fetches schema id from the registry and registers its decoder.
func (c *AvroCodec) learn(ctx context.Context, id int) error {
	if c.cl == nil {
		return &DecodeError{SchemaID: id, Kind: decodeNoRegistry}
	}
	c.mu.Lock()
	if f, ok := c.failed[id]; ok && time.Now().Before(f.until) {
		c.mu.Unlock()
		return f.err
	}
	m := c.fetch[id]
	if m == nil {
		m = &sync.Mutex{}
		c.fetch[id] = m
	}
	c.mu.Unlock()
	m.Lock()
	defer m.Unlock()
	if c.serde.IsRegistered(id, sr.DecodeFn) {
		return nil // another goroutine learned it meanwhile
	}
	c.mu.Lock()
	if f, ok := c.failed[id]; ok && time.Now().Before(f.until) {
		c.mu.Unlock()
		return f.err
	}
	c.mu.Unlock()
	err := c.fetchSchema(ctx, id)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) && (de.Kind == decodeRegistryDown || de.Kind == decodeUnknownSchema) && ctx.Err() == nil {
			c.mu.Lock()
			c.failed[id] = failedLookup{de, time.Now().Add(registryRetryAfter)}
			c.mu.Unlock()
		}
		return err
	}
	c.mu.Lock()
	delete(c.failed, id)
	c.mu.Unlock()
	return nil
}

func (c *AvroCodec) fetchSchema(ctx context.Context, id int) error {
	ctx, cancel := context.WithTimeout(ctx, c.reg.Timeout)
	defer cancel()
	s, err := c.cl.SchemaByID(ctx, id)
	if err != nil {
		return c.explain(id, err)
	}
	if s.Type != sr.TypeAvro {
		return &DecodeError{SchemaID: id, Registry: c.reg.URL, Kind: decodeBadSchema, Err: fmt.Errorf("it is a %s schema, not Avro", s.Type)}
	}
	if len(s.References) > 0 {
		return &DecodeError{SchemaID: id, Registry: c.reg.URL, Kind: decodeBadSchema, Err: errors.New("schema references are not supported")}
	}
	schema, err := parseAvroSchema(s.Schema)
	if err != nil {
		return &DecodeError{SchemaID: id, Registry: c.reg.URL, Kind: decodeBadSchema, Err: err}
	}
	c.serde.Register(id, jsonValue(nil), sr.DecodeFn(func(body []byte, v any) error {
		out, err := avroToJSON(schema, body)
		if err != nil {
			return &DecodeError{SchemaID: id, Kind: decodeBadBody, Err: err}
		}
		*v.(*jsonValue) = out
		return nil
	}))
	return nil
}

// explain classifies a failed registry request.
func (c *AvroCodec) explain(id int, err error) error {
	de := &DecodeError{SchemaID: id, Registry: c.reg.URL, Kind: decodeRegistryDown, Err: err}
	var re *sr.ResponseError
	if errors.As(err, &re) {
		de.Err = fmt.Errorf("HTTP %d: %s", re.StatusCode, oneLine(firstNonEmpty(re.Message, string(re.Raw))))
		switch re.StatusCode {
		case http.StatusNotFound:
			de.Kind = decodeUnknownSchema
		case http.StatusUnauthorized, http.StatusForbidden:
			de.Err = fmt.Errorf("%w (check kafka.schema_registry_username and _password)", de.Err)
		}
		return de
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		de.Err = fmt.Errorf("no answer within %s", c.reg.Timeout)
	}
	return de
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// AvroEncoder writes events in the wire format under one registered schema.
type AvroEncoder struct {
	ID      int    // the schema id the registry gave
	Subject string // the subject it is registered under
	Version int
	serde   *sr.Serde
}

// Encoder registers schema (Avro schema text) under subject, or finds it
// there when it is registered already (the registry gives the same id),
// and returns an encoder of JSON events with it.
func (c *AvroCodec) Encoder(ctx context.Context, subject, schema string) (*AvroEncoder, error) {
	if c.cl == nil {
		return nil, errors.New("kafka: --format avro needs a schema registry: set kafka.schema_registry_url")
	}
	parsed, err := parseAvroSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.reg.Timeout)
	defer cancel()
	// The text as given, not the parser's canonical form: that drops the
	// defaults, the docs and the engram.json marks readers need.
	ss, err := c.cl.CreateSchema(ctx, subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusConflict {
			// The subject's compatibility rule refuses the schema: say so,
			// since the registry's own message names only a diff.
			return nil, fmt.Errorf("schema registry %s: the schema is not compatible with what subject %q holds under its compatibility rule (give another --subject, or a schema that only adds optional fields): %s",
				c.reg.URL, subject, oneLine(firstNonEmpty(re.Message, string(re.Raw))))
		}
		return nil, fmt.Errorf("schema registry %s: registering the schema under subject %q: %w", c.reg.URL, subject, err)
	}
	e := &AvroEncoder{ID: ss.ID, Subject: subject, Version: ss.Version, serde: sr.NewSerde()}
	e.serde.Register(ss.ID, jsonValue(nil), sr.EncodeFn(func(v any) ([]byte, error) {
		return jsonToAvro(parsed, v.(jsonValue))
	}))
	// Decoding what we wrote needs no lookup either.
	c.serde.Register(ss.ID, jsonValue(nil), sr.DecodeFn(func(body []byte, v any) error {
		out, err := avroToJSON(parsed, body)
		if err != nil {
			return &DecodeError{SchemaID: ss.ID, Kind: decodeBadBody, Err: err}
		}
		*v.(*jsonValue) = out
		return nil
	}))
	return e, nil
}

// Encode turns one JSON event into a wire-format value; an error names the
// JSON path that does not fit the schema.
func (e *AvroEncoder) Encode(event []byte) ([]byte, error) {
	b, err := e.serde.Encode(jsonValue(event))
	if err != nil {
		return nil, fmt.Errorf("avro (subject %s, schema id %d): %w", e.Subject, e.ID, err)
	}
	return b, nil
}

// decodeValue sets r's Value to the JSON of its Avro value (the wire bytes
// kept in Wire), or its DecodeErr; JSON values are left as they are.
func (c *AvroCodec) decodeValue(ctx context.Context, r *Record) {
	if !isWire(r.Value) {
		return
	}
	r.Format, r.Wire = FormatAvro, r.Value
	out, id, err := c.Decode(ctx, r.Value)
	r.SchemaID = id
	if err != nil {
		r.DecodeErr = err
		return
	}
	r.Value = out
}

// MarshalJSON lets a Record's decode error print as its message.
func (e *DecodeError) MarshalJSON() ([]byte, error) { return json.Marshal(e.Error()) }
