package sqliteindex

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"engram/model"
)

// rowArgs validates d and returns the insert's arguments, in insertColumns
// order, for d stored with ingested_at = now.
func rowArgs(d *model.IndexDoc, now string) ([]any, error) {
	if d == nil {
		return nil, errors.New("nil document")
	}
	if d.EventID == "" {
		return nil, errors.New("event_id: required")
	}
	if !utf8.ValidString(d.EventID) {
		return nil, errors.New("event_id: not valid UTF-8")
	}
	ts, err := model.ParseTimestamp(d.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("timestamp: %w", err)
	}
	structured := "{}"
	if len(d.Structured) > 0 && string(d.Structured) != "null" {
		if structured, err = compactString(d.Structured); err != nil {
			return nil, fmt.Errorf("structured: not valid JSON: %w", err)
		}
	}
	// The embedding is kept as float32s only (the embedding column); the
	// archive keeps the event's JSON numbers. embedding64, its float64
	// copy up to schema version 7 (12 KB a row at 1536 dimensions, twice
	// the float32s), is NULL.
	for i, f := range d.Embedding {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxFloat32 {
			return nil, fmt.Errorf("embedding: value %d is %v, which a float32 cannot hold", i, f)
		}
	}
	if err := finiteScores(d); err != nil {
		return nil, err
	}
	// The columns hold the document (see inColumns); only one they cannot
	// hold exactly is stored as JSON too. Encoding and storing that JSON
	// for every document was 14% of an index write's CPU and half a row.
	docJSON := ""
	if !inColumns(d) {
		if docJSON, err = storedJSON(d, now); err != nil {
			return nil, err
		}
	}
	tags := "[]"
	if len(d.Tags) > 0 {
		if tags, err = marshalString(d.Tags); err != nil {
			return nil, err
		}
	}
	var emb any
	if len(d.Embedding) > 0 {
		b := make([]byte, 4*len(d.Embedding))
		for i, v := range d.Embedding {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		}
		emb = b
	}
	var success any
	if d.Success != nil {
		success = int64(0)
		if *d.Success {
			success = int64(1)
		}
	}
	var latency any
	if d.LatencyMs != nil {
		latency = *d.LatencyMs
	}
	return []any{
		d.EventID, d.Timestamp, ts.UnixMilli(), now, d.EventType, int64(d.Phase()),
		d.SessionID, null(d.UserID), null(d.AgentID), null(d.TenantID), null(d.TraceID), null(d.TurnID), d.TurnKey(),
		null(d.Tool), null(d.Source), success, latency, d.ImportanceScore, d.RewardScore, d.Confidence,
		int64(d.RetrievalCount), d.DecayFactor, d.ObjectStorageKey, keyOdd(d.ObjectStorageKey, d.EventID, ts), d.Summary, structured,
		emb, int64(len(d.Embedding)), tags, docJSON, nil,
	}, nil
}

// storedJSON is d as the doc column holds it: with ingested_at, and
// without a non-empty embedding (the embedding column holds that).
func storedJSON(d *model.IndexDoc, now string) (string, error) {
	c := *d
	c.IngestedAt = now
	if len(c.Embedding) > 0 {
		c.Embedding = nil
	}
	return marshalString(&c)
}

// finiteScores refuses a score JSON could not hold (NaN, ±Inf), which
// SQLite would store as NULL or as a number no other backend can.
func finiteScores(d *model.IndexDoc) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"importance_score", d.ImportanceScore}, {"reward_score", d.RewardScore},
		{"confidence", d.Confidence}, {"decay_factor", d.DecayFactor}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s: %v is not a number JSON can hold", f.name, f.v)
		}
	}
	return nil
}

func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonBuf is a buffer and its encoder, reused: rowArgs runs for every
// document, and a new buffer grown for each one's JSON was most of its
// allocations.
type jsonBuf struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonBufs = sync.Pool{New: func() any {
	j := &jsonBuf{}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false)
	return j
}}

// maxPooledJSON bounds the buffers kept for reuse: one huge document must
// not pin its buffer for the rest of the run.
const maxPooledJSON = 64 << 10

func getJSONBuf() *jsonBuf {
	j := jsonBufs.Get().(*jsonBuf)
	j.buf.Reset()
	return j
}

func putJSONBuf(j *jsonBuf) {
	if j.buf.Cap() <= maxPooledJSON {
		jsonBufs.Put(j)
	}
}

// marshalString is json.Marshal without HTML escaping (the stored JSON
// stays readable with the sqlite3 shell), as a string.
func marshalString(v any) (string, error) {
	j := getJSONBuf()
	defer putJSONBuf(j)
	if err := j.enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n"))), nil
}

// compactString is json.Compact of raw, as a string.
func compactString(raw []byte) (string, error) {
	j := getJSONBuf()
	defer putJSONBuf(j)
	if err := json.Compact(&j.buf, raw); err != nil {
		return "", err
	}
	return j.buf.String(), nil
}

// keyOdd is the key_odd column: 0 when key is model.ArchiveKey(id, t), the
// key the archive gives the event, so that ScanByKey's walk by day finds
// it; 1 otherwise (no key, or one the archive would not have chosen).
func keyOdd(key, id string, t time.Time) int64 {
	const prefix = model.ArchivePrefixLen
	if len(key) != prefix+len(id)+len(".json") || !strings.HasSuffix(key, ".json") || key[prefix:len(key)-len(".json")] != id {
		return 1
	}
	var want [prefix]byte
	if string(model.AppendArchivePrefix(want[:0], t)) != key[:prefix] {
		return 1
	}
	return 0
}
