package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// Record is a record read from a topic.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []Header
	Timestamp time.Time
	// Control: a transaction marker (only with WatchOptions.KeepControl).
	Control bool

	// Format is how the value was written: formatJSON (or any other text,
	// as it is) or FormatAvro (the schema registry's wire format). An Avro
	// value is decoded as it is read: Value is then the event's JSON, Wire
	// the bytes as stored, SchemaID the schema's id; DecodeErr, when set,
	// says why it could not be decoded (Value is then the stored bytes).
	// Reject always produces the stored bytes.
	Format    string
	SchemaID  int
	Wire      []byte
	DecodeErr error

	kr *kgo.Record // for marking; nil for records built by callers
}

// Header returns the value of the first header named key.
func (r *Record) Header(key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// RawRecord is a record to produce to the raw topic.
type RawRecord struct {
	Key     []byte
	Value   []byte
	Headers []Header
}

// Produced is where the broker stored a produced record.
type Produced struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Stored is the value as the broker stores it (the wire bytes of an Avro
// value, which Value holds decoded).
func (r *Record) Stored() []byte {
	if r.Wire != nil {
		return r.Wire
	}
	return r.Value
}

func fromKgo(kr *kgo.Record) *Record {
	r := &Record{
		Format: formatJSON,
		Topic:  kr.Topic, Partition: kr.Partition, Offset: kr.Offset,
		Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp, Control: kr.Attrs.IsControl(), kr: kr,
	}
	if len(kr.Headers) > 0 {
		r.Headers = make([]Header, len(kr.Headers))
		for i, h := range kr.Headers {
			r.Headers[i] = Header{h.Key, h.Value}
		}
	}
	return r
}

func toKgoHeaders(hs []Header) []kgo.RecordHeader {
	if len(hs) == 0 {
		return nil
	}
	out := make([]kgo.RecordHeader, len(hs))
	for i, h := range hs {
		out[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
	}
	return out
}
