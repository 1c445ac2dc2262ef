package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const knownSecret = "s3cr3t-do-not-print-4711"

func writeConfig(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigPrecedence(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(secretFile, []byte(knownSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, `
profile = "staging"
[profiles.staging]
index = "opensearch"
opensearch.url = "http://from-profile:9200"
opensearch.index = "profile-index"
opensearch.password_file = "`+secretFile+`"
s3.bucket = "profile-bucket"
[profiles.other]
s3.bucket = "other-bucket"
`)
	c := newCLI(t)
	c.env["OPENSEARCH_URL"] = "http://from-env:9200"
	c.env["S3_BUCKET"] = "env-bucket"
	out, stderr, code := c.run("", "config", "--config", cfg, "--s3-bucket", "flag-bucket")
	if code != 0 {
		t.Fatalf("config: %d %s", code, stderr)
	}
	// KEY VALUE FROM, in columns as wide as the longest key.
	for _, want := range []string{
		`profile:     staging`,
		`s3\.bucket +flag-bucket +flag --s3-bucket`,
		`opensearch\.url +http://from-env:9200 +env OPENSEARCH_URL`,
		`opensearch\.index +profile-index +profile staging`,
		`opensearch\.password +<redacted> +file `,
		`index +opensearch +profile staging`,
		`archive +dir +default`,
	} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(out) {
			t.Errorf("config output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr, knownSecret) {
		t.Fatal("engram config printed the secret")
	}
	if !regexp.MustCompile(`(?m)^s3\.endpoint +- +unset$`).MatchString(out) {
		t.Errorf("config does not list the unset keys:\n%s", out)
	}
	out, _, _ = c.run("", "config", "--config", cfg, "--profile", "other")
	if !strings.Contains(out, "env-bucket") {
		t.Errorf("env must beat the profile:\n%s", out)
	}
}

func TestConfigErrors(t *testing.T) {
	c := newCLI(t)
	bad := writeConfig(t, "[profiles.default]\ns3.bucket = \"b\"\nno_such_key = 1\n")
	if _, stderr, code := c.run("", "config", "--config", bad); code != 1 || !strings.Contains(stderr, `unknown key "no_such_key"`) {
		t.Errorf("unknown key: %d %s", code, stderr)
	}
	good := writeConfig(t, "[profiles.default]\ns3.bucket = \"b\"\n")
	if _, stderr, code := c.run("", "config", "--config", good, "--profile", "nope"); code != 1 || !strings.Contains(stderr, `no profile "nope" (have: default)`) {
		t.Errorf("missing profile: %d %s", code, stderr)
	}
	if _, stderr, code := c.run("", "config", "--s3-path-style=maybe"); code != 2 || !strings.Contains(stderr, "want true or false") {
		t.Errorf("bad bool: %d %s", code, stderr)
	}
}

// TestSecretsNeverPrinted runs commands that fail against real-looking
// endpoints with a known secret configured and greps everything they print.
func TestSecretsNeverPrinted(t *testing.T) {
	c := newCLI(t)
	c.env["S3_SECRET_ACCESS_KEY"] = knownSecret
	c.env["OPENSEARCH_PASSWORD"] = knownSecret
	c.env["ENGRAM_EMBEDDER_API_KEY"] = knownSecret
	var all strings.Builder
	for _, args := range [][]string{
		{"config"},
		{"ingest", "--archive", "s3", "--s3-endpoint", "http://127.0.0.1:1", "--s3-bucket", "b", "--s3-access-key", "k"},
		{"ingest", "--index", "opensearch", "--opensearch-url", "http://engram:" + "x@127.0.0.1:1"},
		{"verify", "--index", "opensearch", "--opensearch-url", "http://127.0.0.1:1", "--opensearch-username", "u"},
		{"ingest", "--embedder", "http", "--embedder-endpoint", "http://127.0.0.1:1/v1/embeddings"},
	} {
		out, stderr, _ := c.run(demoLines(1), args...)
		all.WriteString(out + stderr)
	}
	if strings.Contains(all.String(), knownSecret) {
		t.Fatalf("a secret was printed:\n%s", all.String())
	}
	if !strings.Contains(all.String(), "<redacted>") || !strings.Contains(all.String(), "connection refused") {
		t.Fatalf("the commands did not run as expected:\n%s", all.String())
	}
}

// Credentials written into URLs (userinfo, secret-looking query
// parameters) are never printed: not by config, not in any error.
func TestURLCredentialsNeverPrinted(t *testing.T) {
	c := newCLI(t)
	c.env["OPENSEARCH_URL"] = "http://u:pw999x@127.0.0.1:1/?api-key=ak999x"
	c.env["ENGRAM_EMBEDDER_ENDPOINT"] = "http://tok999x@127.0.0.1:1/v1/embeddings?token=tk999x&model=m&X-Amz-Signature=sg999x"
	var all strings.Builder
	for _, args := range [][]string{
		{"config"},
		{"verify", "--index", "opensearch"},
		{"ingest", "--embedder", "http"},
		{"ingest", "--archive", "s3", "--s3-endpoint", "http://k:pw999x@127.0.0.1:1/?secret=sc999x", "--s3-bucket", "b"},
	} {
		out, stderr, _ := c.run(demoLines(1), args...)
		all.WriteString(out + stderr)
	}
	if regexp.MustCompile(`999x`).MatchString(all.String()) {
		t.Fatalf("a credential in a URL was printed:\n%s", all.String())
	}
	for _, want := range []string{"model=m", "127.0.0.1:1", "<redacted>"} {
		if !strings.Contains(all.String(), want) {
			t.Fatalf("want %q in the output (what is not secret stays):\n%s", want, all.String())
		}
	}
}

func TestRedactURLCredentials(t *testing.T) {
	for in, want := range map[string]string{
		`Get "https://user:p@ss@host:9200/x?api_key=1&q=2": refused`: `Get "https://<redacted>@host:9200/x?api_key=<redacted>&q=2": refused`,
		"host:9000/?X-Amz-Credential=a&Password=b#f":                 "host:9000/?X-Amz-Credential=<redacted>&Password=<redacted>#f",
		"no url here, key words: token=abc":                          "no url here, key words: token=abc",
		"http://host/?sessionToken=t;sig=s":                          "http://host/?sessionToken=<redacted>;sig=<redacted>",
	} {
		if got := redactCredentials(in); got != want {
			t.Errorf("redactCredentials(%q)\n got  %q\n want %q", in, got, want)
		}
	}
}

// ui.hop_timeout is a setting like any: shown by engram config with where
// it comes from, given by flag, environment or profile, and a value that
// is not a duration above zero is refused naming the setting and where
// the value came from.
func TestHopTimeoutSetting(t *testing.T) {
	c := newCLI(t)
	out, _, code := c.run("", "config")
	if code != 0 || !regexp.MustCompile(`(?m)^ui\.hop_timeout\s+30s\s+default$`).MatchString(out) {
		t.Fatalf("config: code %d\n%s", code, out)
	}
	out, _, _ = c.run("", "config", "--hop-timeout", "2m")
	if !regexp.MustCompile(`(?m)^ui\.hop_timeout\s+2m\s+flag --hop-timeout$`).MatchString(out) {
		t.Fatalf("config --hop-timeout 2m:\n%s", out)
	}
	for _, bad := range []struct{ args, env, profile, from string }{
		{args: "--hop-timeout=soon", from: `ui.hop_timeout = "soon" (flag --hop-timeout)`},
		{env: "0s", from: `ui.hop_timeout = "0s" (env ENGRAM_HOP_TIMEOUT)`},
		{profile: "-5s", from: `ui.hop_timeout = "-5s" (profile default)`},
	} {
		c.env["ENGRAM_HOP_TIMEOUT"] = bad.env
		args := []string{"config"}
		if bad.args != "" {
			args = append(args, bad.args)
		}
		if bad.profile != "" {
			args = append(args, "--config", writeConfig(t, "[profiles.default]\nui.hop_timeout = \""+bad.profile+"\"\n"))
		}
		_, stderr, code := c.run("", args...)
		if code == 0 || !strings.Contains(stderr, bad.from) || !strings.Contains(stderr, "want a duration above zero") {
			t.Errorf("%+v: code %d, stderr %s", bad, code, stderr)
		}
	}
}
