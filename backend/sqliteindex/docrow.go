package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"engram/model"
)

// docRowColumns are the columns of docs a docRow reads: the document's own
// columns, and doc and embedding (see decodeStoredDoc).
var docRowColumns = []string{
	"doc", "embedding", "event_id", "timestamp", "ingested_at", "event_type", "session_id",
	"user_id", "agent_id", "tenant_id", "trace_id", "turn_id", "tool", "success", "latency_ms",
	"importance_score", "reward_score", "confidence", "retrieval_count", "decay_factor",
	"object_storage_key", "summary", "structured", "tags", "source",
}

// docColumns is what to select from docs (aliased d) for a docRow;
// docColumnsNoVector the same with NULL for the embedding: all verify
// needs, and what an index of schema version 3 or older, whose JSON holds
// the embedding, is read with.
var (
	docColumns         = "d." + strings.Join(docRowColumns, ", d.")
	docColumnsNoVector = strings.Replace(docColumns, "d.embedding,", "NULL,", 1)
	// docSourceBefore9 stands for d.source on an index of schema version 8
	// or older opened read-only (no writer has added the column yet).
	docSourceBefore9 = "(CASE WHEN substr(d.session_id, 1, 7) = 'system:' THEN 'system' END)"
)

// DocColumns is what to select from docs (aliased d) for a docRow. An index
// of schema version 3 or older holds the embedding in the document JSON
// until a writer opens it and upgrades it; a DB opened read-only on one
// checks the version on each call until then.
func (db *DB) DocColumns(ctx context.Context) string {
	if db.legacy.Load() {
		var v int
		err := db.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
		switch {
		case err != nil || v < 4:
			return strings.Replace(docColumnsNoVector, "d.source", docSourceBefore9, 1)
		case v < 9:
			return strings.Replace(docColumns, "d.source", docSourceBefore9, 1)
		}
		db.legacy.Store(false)
	}
	return docColumns
}

// inColumns says whether the columns of d's row hold d exactly, so that its
// JSON need not be stored. They cannot tell tags absent from none ("[]"
// either way), structured absent or null from {} ("{}"), nor an empty
// embedding from an absent one; and they keep a string that is not UTF-8
// as it is, where the JSON holds it with U+FFFD (as it always did).
// model.NewIndexDoc makes none of these.
func inColumns(d *model.IndexDoc) bool {
	if d.Tags == nil || len(d.Structured) == 0 || string(d.Structured) == "null" ||
		(d.Embedding != nil && len(d.Embedding) == 0) {
		return false
	}
	for _, s := range []string{d.EventID, d.Timestamp, d.EventType, d.SessionID, d.UserID,
		d.AgentID, d.Summary, d.ObjectStorageKey, d.TurnID, d.TenantID, d.TraceID, d.Tool, d.Source} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	for _, t := range d.Tags {
		if !utf8.ValidString(t) {
			return false
		}
	}
	return true
}

// docRow is a docs row as docColumns selects it.
type docRow struct {
	doc, emb                                             []byte
	eventID, timestamp, ingestedAt, eventType, sessionID string
	userID, agentID, tenantID, traceID, turnID, tool     sql.NullString
	source                                               sql.NullString
	success, latency                                     sql.NullInt64
	importance, reward, confidence                       float64
	retrieval                                            int64
	decay                                                float64
	key, summary, structured, tags                       string
}

// dest is what to Scan the row's columns into, in docRowColumns order.
func (r *docRow) dest() []any {
	return []any{&r.doc, &r.emb, &r.eventID, &r.timestamp, &r.ingestedAt, &r.eventType, &r.sessionID,
		&r.userID, &r.agentID, &r.tenantID, &r.traceID, &r.turnID, &r.tool, &r.success, &r.latency,
		&r.importance, &r.reward, &r.confidence, &r.retrieval, &r.decay,
		&r.key, &r.summary, &r.structured, &r.tags, &r.source}
}

// document is the stored document: from its JSON where the row has one
// (every row of schema version 5 and older), else from its columns.
func (r *docRow) document() (*model.IndexDoc, error) {
	if len(r.doc) > 0 {
		d, err := decodeStoredDoc(r.doc, r.emb)
		if err == nil && d.Source == "" {
			d.Source = r.source.String
		}
		return d, err
	}
	d := &model.IndexDoc{
		EventID: r.eventID, Timestamp: r.timestamp, IngestedAt: r.ingestedAt, EventType: r.eventType,
		SessionID: r.sessionID, UserID: r.userID.String, AgentID: r.agentID.String,
		TenantID: r.tenantID.String, TraceID: r.traceID.String, TurnID: r.turnID.String, Tool: r.tool.String,
		ImportanceScore: r.importance, RewardScore: r.reward, Confidence: r.confidence,
		RetrievalCount: int(r.retrieval), DecayFactor: r.decay, ObjectStorageKey: r.key,
		Summary: r.summary, Structured: json.RawMessage(r.structured), Source: r.source.String,
	}
	if r.success.Valid {
		d.Success = ptr(r.success.Int64 != 0)
	}
	if r.latency.Valid {
		d.LatencyMs = ptr(r.latency.Int64)
	}
	if r.tags == "[]" {
		d.Tags = []string{}
	} else if err := json.Unmarshal([]byte(r.tags), &d.Tags); err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	var err error
	d.Embedding, err = float32s(r.emb)
	return d, err
}

func ptr[T any](v T) *T { return &v }

// decodeStoredDoc returns the document stored as doc (its JSON) and embedding,
// its float32s (NULL when the embedding is empty: the JSON holds it then).
// The embedding comes back at float32 precision, as the index keeps it.
func decodeStoredDoc(doc, embedding []byte) (*model.IndexDoc, error) {
	d := new(model.IndexDoc)
	if err := json.Unmarshal(doc, d); err != nil {
		return nil, err
	}
	if embedding != nil {
		var err error
		if d.Embedding, err = float32s(embedding); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// float32s decodes an embedding blob (little-endian float32s); nil stays
// nil.
func float32s(b []byte) ([]float64, error) {
	if b == nil {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("embedding: %d bytes is not a whole number of float32s", len(b))
	}
	v := make([]float64, len(b)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v, nil
}
