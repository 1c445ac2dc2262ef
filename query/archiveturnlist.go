package query

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"engram/model"
)

// defaultTurnsPage bounds a page of turns listed from the archive
// (ArchiveTurns.Turns): each turn listed costs a Find, so a page costs at
// most this many turns' Finds (one window search and at most
// DefaultTurnMaxEvents archived events read each, every object read once
// for all of them: the cache), found among at most turnsWalk times as many
// documents read from the index.
const defaultTurnsPage = 50

// turnsWalk bounds the documents one page walks, in pages: most of them
// may belong to turns already listed (three events a turn is common).
const turnsWalk = 4

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
// defaultTurnsPage. A document whose archived event is missing is a turn of
// its own, as the index has it.
func (a *ArchiveTurns) Turns(ctx context.Context, src string, after Cursor, limit int) (TurnPage, error) {
	cur, err := decodeTurnsCursor(after)
	if err != nil {
		return TurnPage{}, err
	}
	limit = min(max(limit, 1), defaultTurnsPage)
	skip := map[string]bool{}
	for _, id := range cur.Skip {
		skip[id] = true
	}
	var out []TurnSummary
	// Never more documents than turns still wanted: each may start one.
	for walked := 0; ; {
		p, err := a.Reader.Recent(ctx, src, cur.Inner, limit-len(out))
		if err != nil {
			return TurnPage{}, err
		}
		walked += len(p.Docs)
		found, err := a.turnsOf(ctx, p.Docs, skip)
		if err != nil {
			return TurnPage{}, err
		}
		for _, d := range p.Docs {
			cur.Oldest = d.Timestamp
			if skip[d.EventID] {
				delete(skip, d.EventID)
				continue
			}
			t := found[d.EventID]
			if t == nil {
				// Its turn's key was searched for from an earlier document,
				// whose window did not reach it: search from this one.
				if t, err = a.findFrom(ctx, d); err != nil {
					return TurnPage{}, fmt.Errorf("the turn of %s from the archive: %w", model.Quote(d.EventID), err)
				}
			}
			key, docs := t.Key, t.Docs
			out = append(out, summarize(key, docs))
			for _, m := range docs {
				if m.EventID != d.EventID {
					skip[m.EventID] = true
				}
			}
		}
		cur.Inner = p.Next
		if len(out) == limit || p.Next == "" || walked >= turnsWalk*limit && len(out) > 0 {
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

// turnsOf finds the turns of docs (but those in skip), by the event id of
// the first document met of each: their archived events are read first,
// concurrently, so that a turn is searched for once however many of its
// events the page holds, and then the turns are searched for
// defaultTurnWorkers at a time (each search is one index request). A
// document whose archived event is missing is a turn of its own.
func (a *ArchiveTurns) turnsOf(ctx context.Context, docs []*model.IndexDoc, skip map[string]bool) (map[string]*ArchiveTurn, error) {
	var todo []*model.IndexDoc
	for _, d := range docs {
		if !skip[d.EventID] {
			todo = append(todo, d)
		}
	}
	fs, err := a.readAll(ctx, todo)
	if err != nil {
		return nil, err
	}
	var firsts []*model.IndexDoc
	met := map[string]bool{}
	out := map[string]*ArchiveTurn{}
	for i, d := range todo {
		switch {
		case fs[i] == nil:
			out[d.EventID] = &ArchiveTurn{Key: d.TurnKey(), Docs: []*model.IndexDoc{d}}
		case !met[fs[i].turnKey()]:
			met[fs[i].turnKey()] = true
			firsts = append(firsts, d)
		}
	}
	turns := make([]*ArchiveTurn, len(firsts))
	errs := make([]error, len(firsts))
	parallel(len(firsts), a.workers(), func(i int) {
		turns[i], errs[i] = a.findFrom(ctx, firsts[i])
	})
	for i, d := range firsts {
		if errs[i] != nil {
			return nil, fmt.Errorf("the turn of %s from the archive: %w", model.Quote(d.EventID), errs[i])
		}
		out[d.EventID] = turns[i]
	}
	return out, nil
}

// parallel runs fn(0..n-1), workers at a time.
func parallel(n, workers int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
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

// summarize is the row of the turn key made of docs.
func summarize(key string, docs []*model.IndexDoc) TurnSummary {
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
	return fmt.Sprintf("turns from the archive (a session's events within ±%s of one, ≤%d read each)",
		a.windowWidth().Round(time.Second), a.maxEvents())
}
