// Package kafka is engram's Kafka backend: the start-up check and topic
// creation, the notification Publisher, the worker's at-least-once group
// Consumer and a group-less Watch for live views (docs/kafka.md). It is the
// only package that imports franz-go; its callers see only its own types.
package kafka
