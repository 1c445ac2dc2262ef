package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"sync"
	"time"

	"engram/ingest/publish"
	"engram/model"
	"engram/ui/uikit"
)

// fileBus is the embedded default's notification topic files
// (<data>/topics/*.jsonl) shown as topics of one partition whose offsets
// are line numbers from 0. There is no raw topic and no group: the
// inspector records in its own process instead.
type fileBus struct {
	dir string
	// indexedAt is when the index took an event (its ingested_at; zero
	// when unknown): the time of the lines already in the files.
	indexedAt func(ctx context.Context, id string) time.Time

	mu    sync.Mutex
	count map[string]lineCount // lines counted so far, by topic
}

// lineCount is how many complete lines a file's first size bytes hold.
type lineCount struct {
	size, lines int64
}

func newFileBus(dir string) *fileBus { return &fileBus{dir: dir, count: map[string]lineCount{}} }

func (b *fileBus) Where() string { return "topic files in " + b.dir }

// TimeNote: a line of a topic file has no time of its own.
func (b *fileBus) TimeNote() string {
	return "time: topic files hold none. A line appended while watching shows when the watch saw it (within 0.25 s); " +
		"one there before, when its event was indexed (ingested_at, just before the line was written)"
}

func (b *fileBus) Topics() []uikit.BusTopic {
	return []uikit.BusTopic{{Name: model.TopicEnriched, Role: uikit.RoleEnriched}, {Name: model.TopicIndexed, Role: uikit.RoleIndexed}}
}

// Stats counts each file's lines, reading only what was appended since
// the last count.
func (b *fileBus) Stats(ctx context.Context) (uikit.BusStats, error) {
	var s uikit.BusStats
	for _, t := range b.Topics() {
		ts := uikit.TopicStats{Name: t.Name, Partitions: 1, Lag: -1}
		n, err := b.lines(t.Name)
		ts.End, ts.Ends, ts.Err = n, []int64{n}, err
		s.Topics = append(s.Topics, ts)
	}
	return s, ctx.Err()
}

func (b *fileBus) lines(topic string) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.count[topic]
	f, err := os.Open(publish.TopicPath(b.dir, topic))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, errors.New("no file yet: written when an event is ingested here")
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < c.size {
		c = lineCount{} // the file was replaced: count afresh
	}
	if _, err := f.Seek(c.size, io.SeekStart); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil { // a line still being written is not counted
			break
		}
		c.size += int64(len(line))
		c.lines++
	}
	b.count[topic] = c
	return c.lines, nil
}

func (b *fileBus) Watch(ctx context.Context, last int) (uikit.BusWatch, error) {
	w := &fileWatch{first: true, last: last, indexedAt: b.indexedAt}
	for _, t := range b.Topics() {
		w.files = append(w.files, &tailFile{topic: t.Name, path: publish.TopicPath(b.dir, t.Name)})
	}
	return w, nil
}

func (b *fileBus) CanSend() bool { return false }

func (b *fileBus) Send(context.Context, *model.Event, func(uikit.BusMessage)) error {
	return errors.New("the topic files take no raw events: set kafka.brokers to send to a deployment")
}

// fileWatch follows the topic files as tail -f does.
type fileWatch struct {
	files     []*tailFile
	first     bool
	last      int
	indexedAt func(ctx context.Context, id string) time.Time
}

// tailFile is how far a topic file was read.
type tailFile struct {
	topic, path string
	off, line   int64
}

// fileWatchEvery is the pause between two looks at the files.
const fileWatchEvery = 250 * time.Millisecond

// Poll returns what the files grew by, waiting until they grow (the first
// poll returns the last lines at once).
func (w *fileWatch) Poll(ctx context.Context) ([]uikit.BusMessage, error) {
	for {
		out, err := w.read()
		if len(out) > 0 || err != nil || w.first {
			if w.first {
				w.stamp(ctx, out)
			}
			w.first = false
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(fileWatchEvery):
		}
	}
}

func (w *fileWatch) read() ([]uikit.BusMessage, error) {
	var out []uikit.BusMessage
	var errs []error
	for _, f := range w.files {
		ms, err := f.read(w.first, w.last)
		out = append(out, ms...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	// By line, the topics' lines of one line number side by side: the
	// files grow together, a line of each per event, and the view keeps
	// this order among equal times (a batch indexed in one millisecond).
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out, errors.Join(errs...)
}

func (w *fileWatch) Close() {}

// stamp gives the lines read first (written before the watch began) the
// time their event was indexed: at most a lookup per event of the last
// lines, both topics' lines of an event sharing it.
func (w *fileWatch) stamp(ctx context.Context, ms []uikit.BusMessage) {
	if w.indexedAt == nil {
		return
	}
	at := map[string]time.Time{}
	for i := range ms {
		if ms[i].Key == "" {
			continue
		}
		t, ok := at[ms[i].Key]
		if !ok {
			t = w.indexedAt(ctx, ms[i].Key)
			at[ms[i].Key] = t
		}
		ms[i].Time = t
	}
}

// read returns the lines appended since the last read; the first read
// keeps only the last ones, as a Kafka watch starts before the end.
func (f *tailFile) read(first bool, last int) ([]uikit.BusMessage, error) {
	fh, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Size() < f.off {
		f.off, f.line = 0, 0 // replaced: read again from the start
	}
	if _, err := fh.Seek(f.off, io.SeekStart); err != nil {
		return nil, err
	}
	var out []uikit.BusMessage
	now := time.Now()
	r := bufio.NewReaderSize(fh, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a line still being written waits for its newline
		}
		f.off += int64(len(line))
		m := uikit.BusMessage{Topic: f.topic, Offset: f.line, Value: line[:len(line)-1]}
		if !first {
			m.Time = now
		}
		var v struct {
			EventID string `json:"eventId"`
		}
		if json.Unmarshal(m.Value, &v) == nil {
			m.Key = v.EventID
		}
		out = append(out, m)
		f.line++
		if first && len(out) > 2*max(last, 1) {
			out = append(out[:0], out[len(out)-last:]...) // bounded while a large file is read
		}
	}
	if first && len(out) > last {
		out = out[len(out)-last:]
	}
	return out, nil
}
