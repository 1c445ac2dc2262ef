// Package systest tests engram as a whole: the real binary over the real
// services (S3, OpenSearch, Kafka, Jaeger), crashes, outages, soaks, the
// end-to-end benchmarks and the architecture test of the import rules.
package systest
