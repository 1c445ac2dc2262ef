package kafka

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"
)

// testPEM is a throw-away self-signed certificate and its key.
func testPEM(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "engram test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

func TestConfigSecretsNotPrinted(t *testing.T) {
	cert, key := testPEM(t)
	const password = "s3cr3t-Pa55word"
	env := map[string]string{
		"KAFKA_BROKERS":        "b1:9093, b2:9093",
		"KAFKA_SSL":            "true",
		"KAFKA_CA_CERT":        cert,
		"KAFKA_ACCESS_CERT":    cert,
		"KAFKA_ACCESS_KEY":     key,
		"KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
		"KAFKA_SASL_USERNAME":  "engram-worker",
		"KAFKA_SASL_PASSWORD":  password,
		"KAFKA_GROUP_ID":       "workers-2",
	}
	cfg, err := fromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Brokers) != 2 || cfg.Brokers[1] != "b2:9093" || cfg.Group != "workers-2" || cfg.ClientID != "engram" ||
		cfg.SASL.Mechanism != saslScramSHA512 || !cfg.TLS.on() || cfg.Topics.Audit != "audit.events" {
		t.Fatalf("fromEnv: %+v", cfg.Brokers)
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("kafka", "config", cfg)
	keyBody := strings.Split(key, "\n")[1][:20] // a piece of the key's base64
	for _, out := range []string{
		cfg.String(), fmt.Sprint(cfg), fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, &cfg),
		fmt.Sprintf("%v %+v %#v", cfg.SASL, cfg.SASL, cfg.SASL), fmt.Sprintf("%v %+v %#v", cfg.TLS, cfg.TLS, cfg.TLS),
		logged.String(),
	} {
		if strings.Contains(out, password) || strings.Contains(out, keyBody) || strings.Contains(out, "PRIVATE KEY") {
			t.Errorf("printed a secret: %s", out)
		}
	}
	s := cfg.String()
	for _, want := range []string{"b1:9093,b2:9093", "group=workers-2", "tls=on", "ca=pem", "client-cert=pem", "sasl=scram-sha-512", "user=engram-worker", "password=set", "audit:audit.events"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, lacks %q", s, want)
		}
	}

	// A key that does not match its certificate: the error names the
	// sources, never the PEM.
	_, otherKey := testPEM(t)
	env["KAFKA_ACCESS_KEY"] = otherKey
	_, err = fromEnv(func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "KAFKA_ACCESS_KEY") || strings.Contains(err.Error(), strings.Split(otherKey, "\n")[1][:20]) {
		t.Errorf("mismatched key: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	cert, key := testPEM(t)
	ok := Config{Brokers: []string{"127.0.0.1:9092"}}.WithDefaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if ok.Topics.Raw != "experience.raw" || ok.Topics.Enriched != "experience.enriched" || ok.Topics.Indexed != "memory.indexed" ||
		ok.Topics.Rejected != "experience.raw.rejected" || ok.Topics.Audit != "" || ok.Group != "ingestion-workers" || ok.ClientID != "engram" || ok.Compression != "gzip" {
		t.Errorf("defaults: %s", ok)
	}
	if d := defaultConfig("x:1"); d.Topics.Audit != "audit.events" {
		t.Errorf("DefaultConfig audit %q", d.Topics.Audit)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no brokers", func(c *Config) { c.Brokers = nil }, "no brokers"},
		{"broker without port", func(c *Config) { c.Brokers = []string{"kafka"} }, `"kafka" is not host:port`},
		{"bad topic", func(c *Config) { c.Topics.Raw = "raw topic" }, "raw topic"},
		{"same topic twice", func(c *Config) { c.Topics.Indexed = c.Topics.Enriched }, "are both"},
		{"unknown mechanism", func(c *Config) { c.SASL = SASL{Mechanism: "gssapi", User: "u", Password: "p"} }, `unknown SASL mechanism "gssapi"`},
		{"scram without password", func(c *Config) { c.SASL = SASL{Mechanism: saslScramSHA256, User: "u"} }, "needs a user and a password"},
		{"user without mechanism", func(c *Config) { c.SASL = SASL{User: "u", Password: "p"} }, "without a mechanism"},
		{"cert without key", func(c *Config) { c.TLS.CertPEM = cert }, "one is missing"},
		{"key without cert", func(c *Config) { c.TLS.KeyPEM = key }, "one is missing"},
		{"CA twice", func(c *Config) { c.TLS.CAPEM, c.TLS.CAFile = cert, "/etc/ca.pem" }, "both as a file and as PEM"},
		{"CA not PEM", func(c *Config) { c.TLS.CAPEM = "hello" }, "holds no PEM certificate"},
		{"CA file missing", func(c *Config) { c.TLS.CAFile = "/nonexistent/ca.pem" }, "/nonexistent/ca.pem"},
		{"unknown compression", func(c *Config) { c.Compression = "brotli" }, `compression "brotli": want one of gzip, snappy, lz4, zstd, none`},
	} {
		c := ok
		tc.edit(&c)
		c = c.WithDefaults()
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	// Every problem at once.
	bad := Config{SASL: SASL{Mechanism: "x"}}.WithDefaults()
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "no brokers") || !strings.Contains(err.Error(), "unknown SASL") {
		t.Errorf("two problems: %v", err)
	}
	if _, err := New(bad); err == nil {
		t.Error("New accepted an invalid config")
	}
}
