package systest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// serviceArgs returns the flags that point engram at the real S3 and
// OpenSearch started by .ci/services, with a fresh bucket and index. It
// skips when they are not configured, unless ENGRAM_REQUIRE_SERVICES=1.
func serviceArgs(t testing.TB) []string {
	t.Helper()
	s3, os1 := os.Getenv("ENGRAM_TEST_S3_ENDPOINT"), os.Getenv("ENGRAM_TEST_OPENSEARCH_URL")
	if s3 == "" || os1 == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_S3_ENDPOINT or ENGRAM_TEST_OPENSEARCH_URL is not set")
		}
		t.Skip("set ENGRAM_TEST_S3_ENDPOINT and ENGRAM_TEST_OPENSEARCH_URL (see .ci/services) to run against real servers")
	}
	t.Setenv("S3_SECRET_ACCESS_KEY", os.Getenv("ENGRAM_TEST_S3_SECRET_KEY"))
	name := fmt.Sprintf("engram-test-%08x", rand.Uint32())
	args := []string{
		"--data", t.TempDir(),
		"--archive", "s3", "--s3-endpoint", "http://" + s3, "--s3-bucket", name, "--s3-create-bucket",
		"--s3-access-key", os.Getenv("ENGRAM_TEST_S3_ACCESS_KEY"), "--s3-region", "us-east-1",
		"--index", "opensearch", "--opensearch-url", os1, "--opensearch-index", name,
		// A refresh after 100,000 vector documents can take long on a busy 2-core machine.
		"--opensearch-timeout", "5m",
	}
	cleanupServices(t, args)
	return args
}

func TestKill9MidIngestS3OpenSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the crash test (tens of thousands of events)")
	}
	crashAndResume(t, 30_000, serviceArgs(t)...)
}

// cleanupServices removes the bucket and index a test made.
func cleanupServices(t testing.TB, args []string) {
	t.Cleanup(func() {
		name := flagValueOf(args, "--s3-bucket")
		ctx := context.Background()
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, os.Getenv("ENGRAM_TEST_OPENSEARCH_URL")+"/"+name, nil); err == nil {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		mc, err := minio.New(os.Getenv("ENGRAM_TEST_S3_ENDPOINT"), &minio.Options{
			Creds: credentials.NewStaticV4(os.Getenv("ENGRAM_TEST_S3_ACCESS_KEY"), os.Getenv("ENGRAM_TEST_S3_SECRET_KEY"), ""),
		})
		if err != nil {
			return
		}
		objects := mc.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true})
		for e := range mc.RemoveObjects(ctx, name, objects, minio.RemoveObjectsOptions{}) {
			t.Logf("cleanup %s: %v", e.ObjectName, e.Err)
		}
		mc.RemoveBucket(ctx, name)
	})
}

func flagValueOf(args []string, name string) string {
	for i := range len(args) - 1 {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}
