package sqliteindex

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"strings"

	"engram/query"
)

// Cursors are base64url text: "s<seq>" for listings in ingestion order
// (the last seq returned, or for turns the last turn's last_seq) and
// "r<rank bits hex>.<seq>" for a ranked search (bm25 and seq of the last
// document returned), "w<top>.<rank bits hex>.<seq>" for one ranking a
// window of the newest matches at or below seq top.

var errCursor = errors.New("sqlite: invalid cursor")

func seqCursor(seq int64) query.Cursor {
	return query.Cursor(base64.RawURLEncoding.EncodeToString([]byte("s" + strconv.FormatInt(seq, 10))))
}

func rankCursor(rank float64, seq int64) query.Cursor {
	s := "r" + strconv.FormatUint(math.Float64bits(rank), 16) + "." + strconv.FormatInt(seq, 10)
	return query.Cursor(base64.RawURLEncoding.EncodeToString([]byte(s)))
}

func decode(c query.Cursor) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(string(c))
	if err != nil || len(b) < 2 {
		return "", errCursor
	}
	return string(b), nil
}

// parseSeq reads a seq cursor; "" is 0 (the start for a tail).
func parseSeq(c query.Cursor) (int64, error) {
	if c == "" {
		return 0, nil
	}
	s, err := decode(c)
	if err != nil || s[0] != 's' {
		return 0, errCursor
	}
	n, err := strconv.ParseInt(s[1:], 10, 64)
	if err != nil || n < 0 {
		return 0, errCursor
	}
	return n, nil
}

// parseBefore reads the cursor of a newest-first listing: the seq to stay
// below ("" is no bound).
func parseBefore(c query.Cursor) (int64, error) {
	if c == "" {
		return math.MaxInt64, nil
	}
	return parseSeq(c)
}

func parseRank(c query.Cursor) (rank float64, seq int64, err error) {
	s, err := decode(c)
	if err != nil || s[0] != 'r' {
		return 0, 0, errCursor
	}
	bits, sq, ok := strings.Cut(s[1:], ".")
	if !ok {
		return 0, 0, errCursor
	}
	b, err1 := strconv.ParseUint(bits, 16, 64)
	n, err2 := strconv.ParseInt(sq, 10, 64)
	rank = math.Float64frombits(b)
	if err1 != nil || err2 != nil || math.IsNaN(rank) {
		return 0, 0, errCursor
	}
	return rank, n, nil
}

func windowCursor(top int64, offset int) query.Cursor {
	s := "w" + strconv.FormatInt(top, 10) + "." + strconv.Itoa(offset)
	return query.Cursor(base64.RawURLEncoding.EncodeToString([]byte(s)))
}

func parseWindow(c query.Cursor) (top int64, offset int, err error) {
	s, err := decode(c)
	if err != nil || s[0] != 'w' {
		return 0, 0, errCursor
	}
	t, o, ok := strings.Cut(s[1:], ".")
	if !ok {
		return 0, 0, errCursor
	}
	top, err1 := strconv.ParseInt(t, 10, 64)
	offset, err2 := strconv.Atoi(o)
	if err1 != nil || err2 != nil || top < 0 || offset < 0 {
		return 0, 0, errCursor
	}
	return top, offset, nil
}
