package query

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"engram/model"
)

// DefaultTurnsPage bounds a page of turns listed from the archive
// (ArchiveTurns.Turns): each turn listed costs a Find, so a page costs at
// most one read of this many documents (more only while every document
// read belongs to a turn already listed), one window search per turn and
// at most DefaultTurnMaxEvents archived events read per turn, each object
// read once for all of them (the cache).
const DefaultTurnsPage = 50

// maxSkip bounds the event ids an archive turns cursor carries.
const maxSkip = 512

// archiveCursorPrefix marks a cursor of ArchiveTurns.Turns.
const archiveCursorPrefix = "archive:"

// turnsCursor is where a listing from the archive stands: the index's
// cursor of the documents walked, and the members of turns already listed
// that the walk has not reached yet (they are not listed again).
type turnsCursor struct {
	Inner Cursor   `json:"c"`
	Skip  []string `json:"s,omitempty"`
	// Oldest is the timestamp of the oldest document walked: a member
	// newer than it will not be met again, so it leaves Skip.
	Oldest string `json:"o,omitempty"`
}

func (c turnsCursor) encode() Cursor {
	b, _ := json.Marshal(c)
	return Cursor(archiveCursorPrefix + base64.RawURLEncoding.EncodeToString(b))
}

// IsArchiveTurnsCursor reports whether c continues a listing of turns from
// the archive.
func IsArchiveTurnsCursor(c Cursor) bool { return strings.HasPrefix(string(c), archiveCursorPrefix) }

func decodeTurnsCursor(c Cursor) (turnsCursor, error) {
	var tc turnsCursor
	if c == "" {
		return tc, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(string(c), archiveCursorPrefix))
	if err == nil && IsArchiveTurnsCursor(c) {
		err = json.Unmarshal(b, &tc)
	} else if err == nil {
		err = fmt.Errorf("not a cursor of turns from the archive")
	}
	if err != nil {
		return tc, fmt.Errorf("cursor %s: %w", model.Quote(string(c)), err)
	}
	return tc, nil
}

// Turns lists the turns of the documents matching src, newest first, as
// the archive groups them: the documents are walked newest first, and the
// first one met of each turn finds the whole turn with Find (so a turn's
// row counts all its events, filtered or not). limit is capped at
// DefaultTurnsPage. A document whose archived event is missing is a turn of
// its own, as the index has it.
func (a *ArchiveTurns) Turns(ctx context.Context, src string, after Cursor, limit int) (TurnPage, error) {
	cur, err := decodeTurnsCursor(after)
	if err != nil {
		return TurnPage{}, err
	}
	limit = min(max(limit, 1), DefaultTurnsPage)
	skip := map[string]bool{}
	for _, id := range cur.Skip {
		skip[id] = true
	}
	var out []TurnSummary
	for {
		p, err := a.Reader.Recent(ctx, src, cur.Inner, limit)
		if err != nil {
			return TurnPage{}, err
		}
		for _, d := range p.Docs {
			cur.Oldest = d.Timestamp
			if skip[d.EventID] {
				delete(skip, d.EventID)
				continue
			}
			key, docs, err := a.turnOf(ctx, d)
			if err != nil {
				return TurnPage{}, err
			}
			out = append(out, Summarize(key, docs))
			for _, m := range docs {
				if m.EventID != d.EventID {
					skip[m.EventID] = true
				}
			}
		}
		cur.Inner = p.Next
		if len(out) > 0 || p.Next == "" {
			break
		}
	}
	var next Cursor
	if cur.Inner != "" {
		cur.Skip = pruneSkip(skip, cur.Oldest, a.memberTimes)
		next = cur.encode()
	}
	return TurnPage{Turns: out, Next: next}, nil
}

// turnOf is the documents of d's turn from the archive, or d alone when
// the archive has no event for it.
func (a *ArchiveTurns) turnOf(ctx context.Context, d *model.IndexDoc) (string, []*model.IndexDoc, error) {
	t, err := a.Find(ctx, d.EventID)
	if IsLayersDisagree(err) {
		return d.TurnKey(), []*model.IndexDoc{d}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("the turn of %s from the archive: %w", model.Quote(d.EventID), err)
	}
	return t.Key, t.Docs, nil
}

// memberTimes is the timestamp of each cached turn member.
func (a *ArchiveTurns) memberTimes(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.turns[id]; t != nil {
		for _, d := range t.Docs {
			if d.EventID == id {
				return d.Timestamp
			}
		}
	}
	return ""
}

// pruneSkip keeps the members still to be met: those not newer than the
// oldest document walked (the walk is newest first), at most maxSkip.
func pruneSkip(skip map[string]bool, oldest string, ts func(string) string) []string {
	limit, err := model.ParseTimestamp(oldest)
	var out []string
	for id := range skip {
		if t, terr := model.ParseTimestamp(ts(id)); err == nil && terr == nil && t.After(limit) {
			continue
		}
		if len(out) == maxSkip {
			break
		}
		out = append(out, id)
	}
	return out
}

// Summarize is the row of the turn key made of docs.
func Summarize(key string, docs []*model.IndexDoc) TurnSummary {
	s := TurnSummary{Key: key}
	for _, d := range docs {
		if s.SessionID == "" {
			s.SessionID = d.SessionID
		}
		if s.AgentID == "" {
			s.AgentID = d.AgentID
		}
		if s.TenantID == "" {
			s.TenantID = d.TenantID
		}
		s.Events++
		s.AnyFailed = s.AnyFailed || d.Success != nil && !*d.Success
		s.MaxImportance = max(s.MaxImportance, d.ImportanceScore)
		if t, err := model.ParseTimestamp(d.Timestamp); err == nil {
			if s.First.IsZero() || t.Before(s.First) {
				s.First = t
			}
			if t.After(s.Last) {
				s.Last = t
			}
		}
	}
	return s
}

// TurnsNote says how a page of turns from the archive was found, for the
// inspector's Turns view.
func (a *ArchiveTurns) TurnsNote() string {
	return fmt.Sprintf("turns from the archive: each one's events are the session's within %s of one of them, at most %d read",
		a.windowWidth().Round(time.Second), a.maxEvents())
}
