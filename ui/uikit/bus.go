package uikit

import (
	"context"
	"time"

	"engram/model"
)

// Bus is the deployment's event bus as the Topics view watches it and the
// record form sends into it: Kafka when kafka.brokers is set, else the
// embedded default's topic files. The commands implement it (cli), so the
// inspector never speaks Kafka itself.
type Bus interface {
	// Where names the bus for the view's title: the brokers, or the
	// directory of the topic files.
	Where() string
	// Topics are the topics watched, in the order shown.
	Topics() []BusTopic
	// TimeNote says what a message's Time is, for the view's help.
	TimeNote() string
	// Stats is every topic's partitions, end offsets and the worker
	// group's lag, as of now.
	Stats(ctx context.Context) (BusStats, error)
	// Watch reads every topic, never in a consumer group and never
	// committing: from last messages before each partition's end.
	Watch(ctx context.Context, last int) (BusWatch, error)
	// CanSend: Send works (Kafka; the topic files take no raw events).
	CanSend() bool
	// Send produces ev to the raw topic and then reports, through seen,
	// where it was stored and each notification message keyed by its id,
	// until ctx ends or both notification topics have shown it. The
	// watch on the notification topics starts before the produce, so no
	// hop can be missed.
	Send(ctx context.Context, ev *model.Event, seen func(BusMessage)) error
}

// BusTopic is a topic and the part it plays.
type BusTopic struct {
	Name string
	// Role is one of the Role constants.
	Role string
}

// The parts a topic plays in the pipeline.
const (
	RoleRaw      = "raw"      // experience.raw: the events agents produce
	RoleEnriched = "enriched" // experience.enriched
	RoleIndexed  = "indexed"  // memory.indexed
	RoleAudit    = "audit"    // the copy of both notification topics
	RoleRejected = "rejected" // what the workers could not take
	RoleFeedback = "feedback" // memory.feedback: the source system's judgements of memories
)

// Announces reports whether the topic's messages are keyed by an indexed
// event's id.
func (t BusTopic) Announces() bool {
	return t.Role == RoleEnriched || t.Role == RoleIndexed || t.Role == RoleAudit
}

// BusWatch is a running read of the topics.
type BusWatch interface {
	// Poll waits for the next messages (an empty batch is fine); ctx's
	// error when ctx ends.
	Poll(ctx context.Context) ([]BusMessage, error)
	Close()
}

// BusMessage is one message of a topic. Every string in it comes from
// outside: clean it before drawing.
type BusMessage struct {
	Topic     string
	Partition int32
	Offset    int64
	Time      time.Time
	Key       string
	Headers   []BusHeader
	Value     []byte
	// Hop, for Send's reports: which step this message is.
	Hop Hop
}

// BusHeader is one message header.
type BusHeader struct{ Key, Value string }

// Header is the value of the first header named k.
func (m *BusMessage) Header(k string) string {
	for _, h := range m.Headers {
		if h.Key == k {
			return h.Value
		}
	}
	return ""
}

// Hop is a step of a sent event's way through the deployment.
type Hop int

// The hops, in the order they come.
const (
	HopProduced Hop = iota // the broker stored it in the raw topic
	HopEnriched            // seen on experience.enriched
	HopIndexed             // seen on memory.indexed
	HopFound               // the index returns its document
	HopArchived            // its archived object is readable
	NumHops
)

var hopNames = [NumHops]string{"produced", "enriched", "indexed", "in index", "archived"}

func (h Hop) String() string { return hopNames[h] }

// BusStats is the state of every topic and of the worker group.
type BusStats struct {
	Topics []TopicStats
	// Group is the worker group whose lag is shown ("" for topic files);
	// GroupState its state, Members its members.
	Group      string
	GroupState string
	Members    int
	// GroupErr: the group could not be described (the topics still were).
	GroupErr error
}

// TopicStats is one topic's partitions and offsets.
type TopicStats struct {
	Name string
	// Partitions is the number of partitions (1 for a topic file).
	Partitions int
	// End is the sum of the partitions' end offsets: the messages ever
	// written (a file's lines).
	End int64
	// Ends are the partitions' end offsets, by partition number.
	Ends []int64
	// Lag is what the group has not committed on this topic; -1 when the
	// group does not read it.
	Lag int64
	// Err: this topic could not be read (missing, say).
	Err error
}
