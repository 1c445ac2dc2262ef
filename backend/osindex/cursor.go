package osindex

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"

	"engram/query"
)

// Cursors are base64url text of a kind byte and a JSON payload:
//
//	'r' the position of the last document of a page in ingestion order
//	    (Recent, Search without free words)
//	's' the same with the relevance score (Search with free words)
//	'u' the position of the latest document of the last turn of a page (Turns)
//	't' a tail position (Tail, TailStart), deflated: see tail.go

const (
	kindRecent = 'r'
	kindScored = 's'
	kindTurns  = 'u'
	kindTail   = 't'
)

var errCursor = errors.New("opensearch: invalid cursor")

// wirePos is a position in a cursor.
type wirePos struct {
	S  *json.Number `json:"s,omitempty"`
	K  int64        `json:"k"`
	Q  int64        `json:"q"`
	ID string       `json:"i"`
}

func toWire(p pos) wirePos {
	w := wirePos{K: p.k, Q: p.seq, ID: p.id}
	if p.scored {
		raw := p.raw
		w.S = &raw
	}
	return w
}

func (w wirePos) pos(scored bool) (pos, error) {
	p := pos{k: w.K, seq: w.Q, id: w.ID}
	if scored != (w.S != nil) {
		return pos{}, errCursor
	}
	if scored {
		f, err := strconv.ParseFloat(string(*w.S), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return pos{}, errCursor
		}
		p.scored, p.score, p.raw = true, f, *w.S
	}
	return p, nil
}

func encode(kind byte, payload []byte) query.Cursor {
	return query.Cursor(base64.RawURLEncoding.EncodeToString(append([]byte{kind}, payload...)))
}

// decode checks c's kind and returns its payload.
func decode(c query.Cursor, kind byte) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(string(c))
	if err != nil || len(b) < 2 || b[0] != kind {
		return nil, errCursor
	}
	return b[1:], nil
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil || dec.More() {
		return errCursor
	}
	return nil
}

// posCursor is the cursor of a page that ends at p.
func posCursor(kind byte, p pos) query.Cursor {
	b, _ := json.Marshal(toWire(p))
	return encode(kind, b)
}

// parsePos reads a position cursor of the kind; "" is nil (the start).
func parsePos(c query.Cursor, kind byte) (*pos, error) {
	if c == "" {
		return nil, nil
	}
	b, err := decode(c, kind)
	if err != nil {
		return nil, err
	}
	var w wirePos
	if err := strictJSON(b, &w); err != nil {
		return nil, err
	}
	p, err := w.pos(kind == kindScored)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// tailState is the content of a tail cursor.
type tailState struct {
	// P is the latest position delivered (nil: nothing yet, tail from the
	// start of the index).
	P *pos
	// L is the lower bound (inclusive) of the overlap window, in K
	// milliseconds; every document delivered with K >= L is in Seen.
	L int64
	// Seen are the documents delivered with K >= L.
	Seen []seen
}

type seen struct {
	k  int64
	id string
}

type wireTail struct {
	P    *wirePos `json:"p,omitempty"`
	L    int64    `json:"l"`
	Seen [][2]any `json:"s,omitempty"` // [K - L, id]
}

func tailCursor(st tailState) query.Cursor {
	w := wireTail{L: st.L}
	if st.P != nil {
		wp := toWire(*st.P)
		w.P = &wp
	}
	for _, s := range st.Seen {
		w.Seen = append(w.Seen, [2]any{s.k - st.L, s.id})
	}
	b, _ := json.Marshal(w)
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestSpeed)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return encode(kindTail, buf.Bytes())
}

// maxTailCursor bounds the inflated payload of a tail cursor.
const maxTailCursor = 16 << 20

// parseTail reads a tail cursor; "" is the start.
func parseTail(c query.Cursor) (tailState, error) {
	if c == "" {
		return tailState{L: math.MinInt64}, nil
	}
	b, err := decode(c, kindTail)
	if err != nil {
		return tailState{}, err
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(b)), maxTailCursor))
	if err != nil {
		return tailState{}, errCursor
	}
	var w wireTail
	if err := strictJSON(raw, &w); err != nil {
		return tailState{}, err
	}
	if w.P == nil {
		return tailState{}, errCursor
	}
	p, err := w.P.pos(false)
	if err != nil {
		return tailState{}, err
	}
	st := tailState{P: &p, L: w.L}
	for _, e := range w.Seen {
		n, ok1 := e[0].(json.Number)
		id, ok2 := e[1].(string)
		d, err := n.Int64()
		if !ok1 || !ok2 || err != nil || d < 0 {
			return tailState{}, errCursor
		}
		st.Seen = append(st.Seen, seen{st.L + d, id})
	}
	return st, nil
}
