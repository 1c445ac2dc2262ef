// Package archivetest is the behavioural contract of the archive: one suite,
// Run, that every archive backend (directory, S3) must pass.
package archivetest
