package kafka

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// testEnv returns the named variables (written by .ci/services/kafka.sh
// env), skipping the test when one is unset (failing under
// ENGRAM_REQUIRE_SERVICES=1).
func testEnv(t *testing.T, names ...string) []string {
	t.Helper()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = os.Getenv(n)
		if out[i] == "" {
			if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
				t.Fatalf("ENGRAM_REQUIRE_SERVICES=1 but %s is not set (source .ci/services/.env)", n)
			}
			t.Skipf("set %s (bash .ci/services/kafka.sh env) to run this test", n)
		}
	}
	return out
}

// secured is cfg (whose topics exist on the plaintext listener) pointed at
// another listener of the same broker.
func secured(cfg Config, broker string) Config {
	cfg.Brokers = []string{broker}
	cfg.DeliveryTimeout, cfg.DialTimeout = 10*time.Second, 3*time.Second
	return cfg
}

func checkAndProduce(t *testing.T, cfg Config) {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.CheckTopics(ctx, cfg.Topics.Raw); err != nil {
		t.Fatalf("%s: Check: %v", cfg.SASL.Mechanism, err)
	}
	if _, err := c.ProduceRaw(ctx, []RawRecord{{Key: []byte("k"), Value: []byte(`{}`)}}); err != nil {
		t.Fatalf("%s: produce: %v", cfg.SASL.Mechanism, err)
	}
}

func checkErr(t *testing.T, cfg Config) error {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err = c.CheckTopics(ctx, cfg.Topics.Raw)
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Check took %v", d)
	}
	if err == nil {
		t.Fatal("Check passed")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("Check error is not one line: %q", err)
	}
	return err
}

func TestSASL(t *testing.T) {
	t.Parallel()
	env := testEnv(t, "ENGRAM_TEST_KAFKA_SASL_BROKERS", "ENGRAM_TEST_KAFKA_SASL_USERNAME", "ENGRAM_TEST_KAFKA_SASL_PASSWORD")
	base := testConfig(t)
	setup(t, base, 1, base.Topics.Raw)
	cfg := secured(base, env[0])
	for _, mech := range []string{saslPlain, saslScramSHA256, saslScramSHA512} {
		cfg.SASL = SASL{Mechanism: mech, User: env[1], Password: env[2]}
		checkAndProduce(t, cfg)

		cfg.SASL.Password = "wrong-" + env[2]
		err := checkErr(t, cfg)
		if !IsProblem(err, problemSASL) {
			t.Errorf("%s, wrong password: %v, want SASL refused", mech, err)
			continue
		}
		msg := err.Error()
		t.Logf("%s, wrong password: %s", mech, msg)
		for _, want := range []string{env[0], "SASL refused", "KAFKA_SASL_PASSWORD", env[1]} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q lacks %q", mech, msg, want)
			}
		}
		if strings.Contains(msg, cfg.SASL.Password) {
			t.Errorf("%s: error %q shows the password", mech, msg)
		}
	}
	// No SASL on a SASL listener: the broker hangs up; the error says
	// what to set.
	cfg.SASL = SASL{}
	if err := checkErr(t, cfg); !strings.Contains(err.Error(), "KAFKA_SASL_MECHANISM") {
		t.Errorf("no SASL on a SASL listener: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	env := testEnv(t, "ENGRAM_TEST_KAFKA_TLS_BROKERS", "ENGRAM_TEST_KAFKA_CA_FILE", "ENGRAM_TEST_KAFKA_CLIENT_CERT_FILE", "ENGRAM_TEST_KAFKA_CLIENT_KEY_FILE")
	base := testConfig(t)
	setup(t, base, 1, base.Topics.Raw)
	cfg := secured(base, env[0])
	cfg.TLS = TLS{CAFile: env[1], CertFile: env[2], KeyFile: env[3]}
	checkAndProduce(t, cfg)

	// The same as PEM strings, the way the source system passes them.
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	vars := map[string]string{
		"KAFKA_BROKERS": env[0], "KAFKA_SSL": "true",
		"KAFKA_CA_CERT": read(env[1]), "KAFKA_ACCESS_CERT": read(env[2]), "KAFKA_ACCESS_KEY": read(env[3]),
	}
	envCfg, err := fromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	envCfg.Topics = base.Topics
	checkAndProduce(t, envCfg)

	otherCA, otherKey := testPEM(t)
	for _, tc := range []struct {
		name string
		tls  TLS
		fix  string
	}{
		{"unknown CA", TLS{CAPEM: otherCA, CertFile: env[2], KeyFile: env[3]}, "not signed by the CA"},
		{"wrong server name", TLS{CAFile: env[1], CertFile: env[2], KeyFile: env[3], ServerName: "kafka.example.com"}, "does not name this host"},
		{"no client certificate", TLS{CAFile: env[1]}, "wants a client certificate"},
		{"client certificate of another CA", TLS{CAFile: env[1], CertPEM: otherCA, KeyPEM: otherKey}, "wants a client certificate"},
	} {
		c := cfg
		c.TLS = tc.tls
		err := checkErr(t, c)
		t.Logf("%s: %v", tc.name, err)
		if !IsProblem(err, problemTLS) || !strings.Contains(err.Error(), env[0]) || !strings.Contains(err.Error(), tc.fix) {
			t.Errorf("%s: %v, want a TLS failure naming %s and %q", tc.name, err, env[0], tc.fix)
		}
	}
}
