package s3archive

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// awsEndpoint is used when no endpoint is configured.
const awsEndpoint = "s3.amazonaws.com"

// defaultTimeout bounds connecting, the TLS handshake and waiting for
// response headers, and the whole start-up check.
const defaultTimeout = 30 * time.Second

// Config says how to reach the bucket. Its String method (and GoString)
// never shows SecretKey.
type Config struct {
	// Endpoint is host[:port], or a URL http(s)://host[:port] whose scheme
	// then overrides UseTLS. Empty means AWS (s3.amazonaws.com, TLS).
	Endpoint string
	Bucket   string
	// Region is the signing region; empty lets the client ask the bucket.
	Region    string
	AccessKey string
	SecretKey string
	// PathStyle addresses buckets as endpoint/bucket instead of
	// bucket.endpoint (needed by most self-hosted servers).
	PathStyle bool
	UseTLS    bool
	// CAFile is a PEM bundle trusted in addition to the system roots.
	CAFile string
	// InsecureSkipVerify disables certificate verification (testing only).
	InsecureSkipVerify bool
	// Timeout bounds connecting, the TLS handshake, waiting for response
	// headers and the start-up check (0: 30s).
	Timeout time.Duration
	// Logf, when set, receives warnings (such as the racy write-once
	// fallback for servers without conditional writes).
	Logf func(format string, args ...any)

	// wrapTransport lets tests interpose on requests.
	wrapTransport func(http.RoundTripper) http.RoundTripper
}

// configFromEnv reads the source system's variables: S3_BUCKET, S3_REGION
// (else AWS_REGION), S3_ENDPOINT, S3_ACCESS_KEY_ID (else AWS_ACCESS_KEY_ID),
// S3_SECRET_ACCESS_KEY (else AWS_SECRET_ACCESS_KEY) and S3_FORCE_PATH_STYLE.
// S3_ENDPOINT may be a URL (http:// means plain HTTP) or host:port, which
// means TLS.
func configFromEnv(getenv func(string) string) Config {
	first := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return v
			}
		}
		return ""
	}
	c := Config{
		Bucket:    first("S3_BUCKET"),
		Region:    first("S3_REGION", "AWS_REGION"),
		AccessKey: first("S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"),
		SecretKey: first("S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"),
		UseTLS:    true,
	}
	c.PathStyle, _ = strconv.ParseBool(first("S3_FORCE_PATH_STYLE"))
	c.Endpoint = first("S3_ENDPOINT")
	if host, tls, err := c.hostAndTLS(); err == nil && c.Endpoint != "" {
		c.Endpoint, c.UseTLS = host, tls
	} // else left as written, for Open to report
	return c
}

// hostAndTLS normalizes Endpoint to host[:port] and whether to use TLS.
func (c Config) hostAndTLS() (string, bool, error) {
	ep := strings.TrimSpace(c.Endpoint)
	if ep == "" {
		return awsEndpoint, true, nil
	}
	if !strings.Contains(ep, "://") {
		if strings.ContainsAny(ep, "/?# ") {
			return "", false, fmt.Errorf("S3 endpoint %q: give host:port or http(s)://host:port", c.Endpoint)
		}
		return ep, c.UseTLS, nil
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("S3 endpoint %q: give host:port or http(s)://host:port", c.Endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return defaultTimeout
}

// endpointURL is the endpoint as a URL, for messages.
func (c Config) endpointURL() string {
	host, tls, err := c.hostAndTLS()
	if err != nil {
		return c.Endpoint
	}
	if tls {
		return "https://" + host
	}
	return "http://" + host
}

// Redacted describes the configuration without the secret key.
func (c Config) Redacted() string {
	var b strings.Builder
	fmt.Fprintf(&b, "s3 bucket %q at %s", c.Bucket, c.endpointURL())
	var opts []string
	if c.Region != "" {
		opts = append(opts, "region "+c.Region)
	}
	if c.PathStyle {
		opts = append(opts, "path-style")
	}
	if c.AccessKey != "" {
		opts = append(opts, "access key "+c.AccessKey)
	} else {
		opts = append(opts, "anonymous")
	}
	if c.SecretKey != "" {
		opts = append(opts, "secret key set")
	}
	if c.CAFile != "" {
		opts = append(opts, "CA "+c.CAFile)
	}
	if c.InsecureSkipVerify {
		opts = append(opts, "certificate verification OFF")
	}
	if c.Timeout > 0 {
		opts = append(opts, "timeout "+c.Timeout.String())
	}
	fmt.Fprintf(&b, " (%s)", strings.Join(opts, ", "))
	return b.String()
}

// String is Redacted.
func (c Config) String() string { return c.Redacted() }

// GoString is Redacted, so %#v does not print the secret either.
func (c Config) GoString() string { return "s3archive.Config{" + c.Redacted() + "}" }
