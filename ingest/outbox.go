package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"engram/backend"
	"engram/model"
)

// Announcement is the two notifications of one indexed event, and the
// trace context they carry (the event's own context.traceId and spanId, as
// the source system attaches them; empty when it has none).
type Announcement struct {
	Enriched   model.Enriched `json:"enriched"`
	Indexed    model.Indexed  `json:"indexed"`
	TraceID    string         `json:"traceId,omitempty"`
	SpanID     string         `json:"spanId,omitempty"`
	TraceState string         `json:"traceState,omitempty"`

	// The notifications' JSON, once Encoded.
	enrichedJSON, indexedJSON []byte
}

// Encoded is a with its two notifications encoded, so that the outbox and
// the publisher, which both write them, do not encode them again each.
func (a Announcement) Encoded() (Announcement, error) {
	var err error
	if a.enrichedJSON, err = a.EnrichedJSON(); err != nil {
		return a, err
	}
	a.indexedJSON, err = a.IndexedJSON()
	return a, err
}

// EnrichedJSON is the enriched notification as json.Marshal encodes it:
// the payload of the topic (without a newline). The caller must not
// modify it.
func (a Announcement) EnrichedJSON() ([]byte, error) {
	if a.enrichedJSON != nil {
		return a.enrichedJSON, nil
	}
	return json.Marshal(a.Enriched)
}

// IndexedJSON is the indexed notification as json.Marshal encodes it.
func (a Announcement) IndexedJSON() ([]byte, error) {
	if a.indexedJSON != nil {
		return a.indexedJSON, nil
	}
	return json.Marshal(a.Indexed)
}

// Outbox makes notifications at-least-once: a batch's announcements are held
// (appended and fsynced) before its index write commits and released once
// published, so after a crash the next run announces them again
// (Pipeline.Announce), same key and payload. Each process holds its own
// file under an exclusive flock; Announce takes over only the files no live
// process holds.
type Outbox struct {
	mu   sync.Mutex
	path string              // the base name; the file in use is cur
	cur  string              // the file this process holds ("" until the first Hold)
	f    *os.File            // cur, open and locked
	held map[string][][]byte // eventId → its held and not released lines
}

// compactAt is the size past which a Release that leaves something held
// rewrites the file with only what is held: while batches overlap, the
// moment nothing is held (when the file is emptied) may never come.
const compactAt = 4 << 20

// outboxLine is a held announcement, or the release of some.
type outboxLine struct {
	*Announcement
	Released []string `json:"released,omitempty"`
}

// OpenOutbox uses an outbox file at path, or beside it when another process
// holds that one (created when first needed).
func OpenOutbox(path string) *Outbox { return &Outbox{path: path, held: map[string][][]byte{}} }

// Path is the outbox's file.
func (o *Outbox) Path() string {
	if o.cur != "" {
		return o.cur
	}
	return o.path
}

// siblings are the outbox files of every process that used path.
func (o *Outbox) siblings() []string {
	base := strings.TrimSuffix(o.path, ".jsonl")
	more, _ := filepath.Glob(base + ".*.jsonl")
	return append([]string{o.path}, more...)
}

// lock opens path and takes its exclusive flock, or says another process
// has it (nil, nil).
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}

// acquire takes the first outbox file no other process holds.
func (o *Outbox) acquire() error {
	base := strings.TrimSuffix(o.path, ".jsonl")
	for n := 0; n < 1000; n++ {
		p := o.path
		if n > 0 {
			p = fmt.Sprintf("%s.%d.jsonl", base, n)
		}
		f, err := lockFile(p)
		if err != nil {
			return err
		}
		if f == nil {
			continue // a live process holds it
		}
		if st, err := f.Stat(); err != nil || st.Size() > 0 {
			_ = f.Close() // what a dead process held: Announce's, not ours to empty
			if err != nil {
				return err
			}
			continue
		}
		o.f, o.cur = f, p
		return nil
	}
	return fmt.Errorf("a thousand processes hold an outbox beside %s", o.path)
}

// Hold durably records announcements about to become due.
func (o *Outbox) Hold(as []Announcement) error {
	if len(as) == 0 {
		return nil
	}
	// Sized up front: grown by appending, a batch's buffer was a tenth of
	// an ingest's fresh pages (each growth a new, zeroed allocation).
	size := 0
	for i := range as {
		size += heldSize(&as[i])
	}
	buf := make([]byte, 0, size)
	lines := make([][]byte, len(as))
	for i := range as {
		start := len(buf)
		var err error
		if buf, err = appendHeld(buf, as[i]); err != nil {
			return err
		}
		buf = append(buf, '\n')
		lines[i] = buf[start:len(buf):len(buf)]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.append(buf, true); err != nil {
		return fmt.Errorf("outbox %s: %w", o.path, err)
	}
	for i, a := range as {
		id := a.Enriched.EventID
		o.held[id] = append(o.held[id], lines[i])
	}
	return nil
}

// appendHeld appends the outbox line holding a: what json.Marshal of
// outboxLine{Announcement: &a} gives, put together around the
// notifications' own JSON.
func appendHeld(buf []byte, a Announcement) ([]byte, error) {
	e, err := a.EnrichedJSON()
	if err != nil {
		return buf, err
	}
	i, err := a.IndexedJSON()
	if err != nil {
		return buf, err
	}
	buf = append(append(append(buf, `{"enriched":`...), e...), `,"indexed":`...)
	buf = append(buf, i...)
	for _, f := range a.traceFields() {
		if f.v == "" {
			continue
		}
		buf = append(append(append(buf, `,"`...), f.name...), `":`...)
		if buf, err = appendJSONString(buf, f.v); err != nil {
			return buf, err
		}
	}
	return append(buf, '}'), nil
}

// heldSize is the length of a's outbox line with its newline, exact when
// a is Encoded and its trace fields need no escaping, else an estimate.
func heldSize(a *Announcement) int {
	n := len(`{"enriched":,"indexed":}`+"\n") + len(a.enrichedJSON) + len(a.indexedJSON)
	if a.enrichedJSON == nil || a.indexedJSON == nil {
		n += 512
	}
	for _, f := range a.traceFields() {
		if f.v != "" {
			n += len(`,"":""`) + len(f.name) + len(f.v)
		}
	}
	return n
}

// traceFields are a's trace members in the outbox line, by JSON name.
func (a Announcement) traceFields() [3]struct{ name, v string } {
	return [3]struct{ name, v string }{{"traceId", a.TraceID}, {"spanId", a.SpanID}, {"traceState", a.TraceState}}
}

// appendJSONString appends s as json.Marshal encodes it: as it is, quoted,
// when nothing in it needs escaping (trace ids are hex), else json.Marshal's.
func appendJSONString(buf []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			v, err := json.Marshal(s)
			return append(buf, v...), err
		}
	}
	return append(append(append(buf, '"'), s...), '"'), nil
}

// Release forgets announcements that were published, or that are no longer
// due (their event was not indexed by this run).
func (o *Outbox) Release(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		if ls := o.held[id]; len(ls) > 1 {
			o.held[id] = ls[1:]
		} else {
			delete(o.held, id)
		}
	}
	if o.f == nil {
		return nil
	}
	if len(o.held) == 0 {
		return o.truncate()
	}
	if st, err := o.f.Stat(); err == nil && st.Size() > compactAt {
		return o.compact()
	}
	line, err := json.Marshal(outboxLine{Released: ids})
	if err != nil {
		return err
	}
	return o.append(append(line, '\n'), false)
}

// compact replaces the file with one holding only what is held: written
// and synced beside it, locked, then renamed over it (and the directory
// synced), so a crash leaves one or the other, each holding all that is
// held. A compaction that fails leaves the file as it was.
func (o *Outbox) compact() error {
	tmp := o.cur + ".compact"
	f, err := lockFile(tmp)
	if err != nil || f == nil {
		return fmt.Errorf("outbox %s: compact: %w", o.cur, err)
	}
	err = f.Truncate(0)
	var buf []byte
	for _, ls := range o.held {
		for _, l := range ls {
			buf = append(buf, l...)
		}
	}
	if err == nil {
		err = AppendLines(f, buf, true)
	}
	if err == nil {
		err = os.Rename(tmp, o.cur)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("outbox %s: compact: %w", o.cur, err)
	}
	old := o.f
	o.f = f
	return errors.Join(SyncDir(filepath.Dir(o.cur)), old.Close())
}

// SyncDir fsyncs a directory, making the entries made in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// HeldIDs is every event whose notifications an outbox beside path holds,
// the live processes' and the dead ones' alike (no lock is taken).
func HeldIDs(path string) (map[string]bool, error) {
	ids := map[string]bool{}
	for _, p := range OpenOutbox(path).siblings() {
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		as, err := readHeld(f)
		_ = f.Close()
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			ids[a.Enriched.EventID] = true
		}
	}
	return ids, nil
}

// readHeld is what the outbox file f holds and never released, one
// announcement per event. A torn last line (a crash while holding) is
// skipped: its batch was never committed.
func readHeld(f *os.File) ([]Announcement, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	byID := map[string]Announcement{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l outboxLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		for _, id := range l.Released {
			delete(byID, id)
		}
		if a := l.Announcement; a != nil && a.Enriched.EventID != "" {
			if _, ok := byID[a.Enriched.EventID]; !ok {
				order = append(order, a.Enriched.EventID)
			}
			byID[a.Enriched.EventID] = *a
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var out []Announcement
	for _, id := range order {
		if a, ok := byID[id]; ok {
			out = append(out, a)
			delete(byID, id)
		}
	}
	return out, nil
}

// Close closes the file; an outbox holding nothing is removed.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil
	}
	var err error
	if len(o.held) == 0 { // removed while still locked: no one can take it meanwhile
		if rerr := os.Remove(o.cur); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
		}
	}
	err = errors.Join(err, o.f.Close())
	o.f, o.cur = nil, ""
	return err
}

// append writes b at the end as whole lines or not at all: a short write
// (a full disk) is cut back to where it started, so no later append can
// fuse with half a line.
func (o *Outbox) append(b []byte, sync bool) error {
	if o.f == nil {
		if err := o.acquire(); err != nil {
			return err
		}
	}
	return AppendLines(o.f, b, sync)
}

// truncate empties the file: nothing is held.
func (o *Outbox) truncate() error {
	if err := o.f.Truncate(0); err != nil {
		return err
	}
	_, err := o.f.Seek(0, io.SeekStart)
	return err
}

// CutTornLine makes f end with a whole line: a last line without its
// newline (a write that a crash cut short) is cut off, so the next append
// cannot fuse with it. It returns how many bytes were cut.
func CutTornLine(f *os.File) (int64, error) {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end == 0 {
		return 0, err
	}
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			keep := pos + int64(i) + 1
			if keep == end {
				return 0, nil
			}
			return end - keep, f.Truncate(keep)
		}
	}
	return end, f.Truncate(0)
}

// AppendLines appends b (whole lines) at the end of f, fsyncing when sync is
// set. On a failed or short write the file is truncated back to its size
// before, so it never ends in a cut line; the error is returned.
func AppendLines(f *os.File, b []byte, sync bool) error {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err == nil && sync {
		err = f.Sync()
	}
	if err != nil {
		if terr := f.Truncate(end); terr != nil {
			return fmt.Errorf("%w (and cutting the partial line back failed: %w)", err, terr)
		}
		_, _ = f.Seek(end, io.SeekStart)
		return err
	}
	return nil
}

// Announce publishes what an earlier run held in the outbox and never
// released, retrying transient failures, for the events the index holds.
// It returns how many were announced.
func (p *Pipeline) Announce(ctx context.Context) (int, error) {
	if p.cfg.Outbox == nil || p.cfg.Publisher == nil || p.cfg.DryRun {
		return 0, nil
	}
	return p.cfg.Outbox.Announce(ctx, p.cfg.Index, func(as []Announcement) error { return p.publishAnnouncements(ctx, as) })
}

// Announce publishes, through publish, what earlier runs held and never
// released — the outbox files no live process holds — for the events ix
// holds (an event held but not indexed was never committed, and is not
// announced). A file whose announcements are all published is removed; one
// that could not be is left for the next run. It returns how many were
// announced.
func (o *Outbox) Announce(ctx context.Context, ix Index, publish func([]Announcement) error) (int, error) {
	n := 0
	for _, p := range o.siblings() {
		if p == o.cur {
			continue
		}
		k, err := o.announceFile(ctx, p, ix, publish)
		n += k
		if err != nil {
			return n, fmt.Errorf("announcing what %s holds: %w", p, err)
		}
	}
	return n, nil
}

func (o *Outbox) announceFile(ctx context.Context, path string, ix Index, publish func([]Announcement) error) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	f, err := lockFile(path)
	if err != nil || f == nil {
		return 0, err // f == nil: a live process holds it
	}
	defer f.Close()
	pending, err := readHeld(f)
	if err != nil {
		return 0, err
	}
	due, err := indexed(ctx, ix, pending)
	if err != nil {
		return 0, err
	}
	const batch = 500
	n := 0
	for i := 0; i < len(due); i += batch {
		part := due[i:min(i+batch, len(due))]
		if err := publish(part); err != nil {
			return n, err
		}
		n += len(part)
	}
	return n, os.Remove(path) // still locked: no one took it meanwhile
}

// indexed keeps the announcements whose event ix holds.
func indexed(ctx context.Context, ix Index, as []Announcement) ([]Announcement, error) {
	g, ok := ix.(interface {
		Get(ctx context.Context, eventID string) (*model.IndexDoc, error)
	})
	if !ok {
		return as, nil
	}
	var due []Announcement
	for _, a := range as {
		_, err := g.Get(ctx, a.Enriched.EventID)
		switch {
		case err == nil:
			due = append(due, a)
		case !errors.Is(err, backend.ErrNotFound):
			return nil, err
		}
	}
	return due, nil
}

// publishAnnouncements publishes as, retrying transient failures.
func (p *Pipeline) publishAnnouncements(ctx context.Context, as []Announcement) error {
	return p.retry(ctx, StagePublish, func() error { return p.cfg.Publisher.Publish(ctx, as) })
}
