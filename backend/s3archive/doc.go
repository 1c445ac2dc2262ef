// Package s3archive is the archive (the truth layer) on any S3 API. Each
// event is written once with a conditional PUT (If-None-Match: *), so of
// racing writers exactly one wins, and with Content-MD5 and a signed
// SHA-256, so the server refuses a body damaged on the way.
package s3archive
