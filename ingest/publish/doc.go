// Package publish holds the embedded default's publishers: the notification
// topics as JSON Lines files in the data directory, and the rejects file.
// (On a deployment, notifications go to Kafka: package backend/kafka.)
package publish
