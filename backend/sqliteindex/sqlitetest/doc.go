// Package sqlitetest builds, for benchmarks outside package sqliteindex,
// the million-document index that sqliteindex's own BenchmarkReader uses:
// the same file, built the same way, once.
package sqlitetest
