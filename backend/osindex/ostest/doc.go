// Package ostest is what the OpenSearch tests share: the test cluster
// (skipped without it, failed under ENGRAM_REQUIRE_SERVICES=1), fresh index
// names removed after each test, and admin requests to the cluster.
package ostest
