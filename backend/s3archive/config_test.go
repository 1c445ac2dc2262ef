package s3archive

import (
	"fmt"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want Config
	}{
		{
			map[string]string{"S3_BUCKET": "b", "S3_REGION": "eu-west-1", "S3_ENDPOINT": "http://minio:9000",
				"S3_ACCESS_KEY_ID": "ak", "S3_SECRET_ACCESS_KEY": "sk", "S3_FORCE_PATH_STYLE": "true",
				"AWS_ACCESS_KEY_ID": "aws-ak", "AWS_SECRET_ACCESS_KEY": "aws-sk", "AWS_REGION": "us-west-2"},
			Config{Endpoint: "minio:9000", Bucket: "b", Region: "eu-west-1", AccessKey: "ak", SecretKey: "sk", PathStyle: true},
		},
		{
			map[string]string{"S3_BUCKET": "b", "S3_ENDPOINT": "https://s3.example.com/",
				"AWS_ACCESS_KEY_ID": "aws-ak", "AWS_SECRET_ACCESS_KEY": "aws-sk", "AWS_REGION": "us-west-2", "S3_FORCE_PATH_STYLE": "false"},
			Config{Endpoint: "s3.example.com", Bucket: "b", Region: "us-west-2", AccessKey: "aws-ak", SecretKey: "aws-sk", UseTLS: true},
		},
		{
			map[string]string{"S3_BUCKET": "b", "S3_ENDPOINT": "localhost:9000", "S3_FORCE_PATH_STYLE": "1"},
			Config{Endpoint: "localhost:9000", Bucket: "b", PathStyle: true, UseTLS: true},
		},
		{
			map[string]string{"S3_BUCKET": "b"},
			Config{Bucket: "b", UseTLS: true},
		},
	} {
		got := configFromEnv(env(tc.env))
		if got.Endpoint != tc.want.Endpoint || got.Bucket != tc.want.Bucket || got.Region != tc.want.Region ||
			got.AccessKey != tc.want.AccessKey || got.SecretKey != tc.want.SecretKey ||
			got.PathStyle != tc.want.PathStyle || got.UseTLS != tc.want.UseTLS {
			t.Errorf("ConfigFromEnv(%v) = %+v\nwant %+v", tc.env, fields(got), fields(tc.want))
		}
	}
}

func fields(c Config) string {
	return fmt.Sprintf("{Endpoint:%s Bucket:%s Region:%s AccessKey:%s SecretKey:%s PathStyle:%v UseTLS:%v}",
		c.Endpoint, c.Bucket, c.Region, c.AccessKey, c.SecretKey, c.PathStyle, c.UseTLS)
}

func TestConfigNeverShowsSecret(t *testing.T) {
	c := Config{Endpoint: "minio:9000", Bucket: "b", AccessKey: "ak", SecretKey: "TOPSECRET", CAFile: "/ca.pem"}
	for _, s := range []string{c.String(), c.Redacted(), fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), fmt.Sprint(&c)} {
		if strings.Contains(s, "TOPSECRET") {
			t.Errorf("%q shows the secret", s)
		}
	}
	if r := c.Redacted(); !strings.Contains(r, "http://minio:9000") || !strings.Contains(r, `"b"`) || !strings.Contains(r, "ak") || !strings.Contains(r, "secret key set") {
		t.Errorf("Redacted() = %q; want endpoint, bucket, access key and that a secret is set", r)
	}
}
