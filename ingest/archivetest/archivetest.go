package archivetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// Store is what an archive backend implements.
type Store interface {
	ingest.Archive
	ingest.ArchiveReader
}

// Run runs the contract against stores made by newStore, which must return
// a new, empty store for every call (and clean it up with t.Cleanup).
// Subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"WriteOnce", testWriteOnce},
		{"RacingDifferentBodies", testRacingDifferent},
		{"RacingSameBody", testRacingSame},
		{"GetLimit", testGetLimit},
		{"GetMissing", testGetMissing},
		{"ListOrderAndPrefix", testListOrder},
		{"ListManyKeys", testListMany},
		{"ListStops", testListStops},
		{"InvalidKeys", testInvalidKeys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			if s.Describe() == "" {
				t.Error("Describe() is empty")
			}
			tc.fn(t, s)
		})
	}
}

// Event returns the archive key and archived body of a small event.
// Events with the same id and text are the same event (model.SameEvent)
// whatever their embedding and importance.
func Event(id, timestamp, text string, embedding []float64, importance float64) (string, []byte) {
	key, err := model.ArchiveKey(id, timestamp)
	if err != nil {
		panic(err)
	}
	emb := make([]string, len(embedding))
	for i, v := range embedding {
		emb[i] = fmt.Sprint(v)
	}
	body := fmt.Sprintf(`{"eventId":%q,"timestamp":%q,"type":"user_input","context":{"sessionId":"s-1"},`+
		`"input":{"text":%q,"embedding":[%s]},"tags":["t"],"importanceScore":%v,"objectStorageKey":%q}`,
		id, timestamp, text, strings.Join(emb, ","), importance, key)
	return key, []byte(body)
}

const ts = "2026-05-08T22:31:25Z"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func mustPut(t *testing.T, s Store, key string, body []byte) {
	t.Helper()
	stored, err := s.Put(ctx(t), key, body)
	if err != nil || !stored {
		t.Fatalf("Put(%s) = %v, %v; want stored", key, stored, err)
	}
}

func mustGet(t *testing.T, s Store, key string, limit int64) *ingest.Object {
	t.Helper()
	o, err := s.Get(ctx(t), key, limit)
	if err != nil {
		t.Fatalf("Get(%s, %d): %v", key, limit, err)
	}
	return o
}

func testRoundTrip(t *testing.T, s Store) {
	key, body := Event("rt-1", ts, "hello archive", []float64{0.1, 0.2}, 0.5)
	before := time.Now()
	mustPut(t, s, key, body)
	o := mustGet(t, s, key, 0)
	if !bytes.Equal(o.Body, body) {
		t.Errorf("Get body = %s, want %s", o.Body, body)
	}
	if o.Key != key || o.Size != int64(len(body)) || o.Truncated {
		t.Errorf("Get = key %s size %d truncated %v; want %s %d false", o.Key, o.Size, o.Truncated, key, len(body))
	}
	if o.ETag == "" {
		t.Error("ETag is empty")
	}
	if d := o.LastModified.Sub(before); d < -time.Minute || d > time.Minute {
		t.Errorf("LastModified %v is not around the time of the Put (%v)", o.LastModified, before)
	}
	// Another object has another ETag.
	key2, body2 := Event("rt-2", ts, "other text", nil, 0)
	mustPut(t, s, key2, body2)
	if o2 := mustGet(t, s, key2, 0); o2.ETag == o.ETag {
		t.Errorf("two different objects share ETag %s", o.ETag)
	}
}

func testWriteOnce(t *testing.T, s Store) {
	key, body := Event("wo-1", ts, "the original", []float64{0.1, 0.2}, 0.5)
	mustPut(t, s, key, body)
	etag := mustGet(t, s, key, 0).ETag

	// Identical: a duplicate.
	if stored, err := s.Put(ctx(t), key, body); err != nil || stored {
		t.Errorf("identical re-Put = %v, %v; want duplicate (false, nil)", stored, err)
	}
	// Only what the pipeline derives differs: still the same event.
	_, rederived := Event("wo-1", ts, "the original", []float64{0.3, 0.4}, 0.9)
	if stored, err := s.Put(ctx(t), key, rederived); err != nil || stored {
		t.Errorf("re-Put with another embedding = %v, %v; want duplicate (false, nil)", stored, err)
	}
	// A different event under the key: a conflict.
	_, other := Event("wo-1", ts, "something else", []float64{0.1, 0.2}, 0.5)
	stored, err := s.Put(ctx(t), key, other)
	var ce *ingest.ConflictError
	if stored || !errors.As(err, &ce) || !ingest.IsConflict(err) || ce.Key != key {
		t.Errorf("Put of a different event = %v, %v; want *ingest.ConflictError{%s}", stored, err, key)
	}
	o := mustGet(t, s, key, 0)
	if !bytes.Equal(o.Body, body) || o.ETag != etag {
		t.Errorf("stored object changed: %s (ETag %s), want %s (ETag %s)", o.Body, o.ETag, body, etag)
	}
}

// race runs Put(key, bodies[i]) from len(bodies) goroutines at once.
func race(t *testing.T, s Store, key string, bodies [][]byte) ([]bool, []error) {
	stored := make([]bool, len(bodies))
	errs := make([]error, len(bodies))
	start := make(chan struct{})
	var wg sync.WaitGroup
	c := ctx(t)
	for i := range bodies {
		wg.Go(func() {
			<-start
			stored[i], errs[i] = s.Put(c, key, bodies[i])
		})
	}
	close(start)
	wg.Wait()
	return stored, errs
}

func testRacingDifferent(t *testing.T, s Store) {
	const n = 8
	for round := range 3 {
		var key string
		bodies := make([][]byte, n)
		for i := range bodies {
			key, bodies[i] = Event(fmt.Sprintf("race-%d", round), ts, fmt.Sprintf("writer %d", i), nil, 0)
		}
		stored, errs := race(t, s, key, bodies)
		winner := -1
		for i := range n {
			switch {
			case stored[i] && errs[i] == nil:
				if winner >= 0 {
					t.Errorf("round %d: writers %d and %d both stored", round, winner, i)
				}
				winner = i
			case !stored[i] && ingest.IsConflict(errs[i]):
			default:
				t.Errorf("round %d: writer %d: Put = %v, %v; want stored or a conflict", round, i, stored[i], errs[i])
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer stored", round)
		}
		if o := mustGet(t, s, key, 0); !bytes.Equal(o.Body, bodies[winner]) {
			t.Errorf("round %d: stored %s, want the winner's %s", round, o.Body, bodies[winner])
		}
	}
}

func testRacingSame(t *testing.T, s Store) {
	const n = 8
	key, body := Event("race-same", ts, "everyone writes this", []float64{1}, 0.2)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = body
	}
	stored, errs := race(t, s, key, bodies)
	wins := 0
	for i := range n {
		if errs[i] != nil {
			t.Errorf("writer %d: %v; want stored or duplicate", i, errs[i])
		}
		if stored[i] {
			wins++
		}
	}
	if wins != 1 {
		t.Errorf("%d writers stored, want exactly 1", wins)
	}
}

func testGetLimit(t *testing.T, s Store) {
	key, body := Event("limit-1", ts, strings.Repeat("long text ", 50), nil, 0)
	mustPut(t, s, key, body)
	size := int64(len(body))
	for _, tc := range []struct {
		limit     int64
		truncated bool
	}{{10, true}, {size - 1, true}, {size, false}, {size + 100, false}, {0, false}, {-1, false}} {
		o := mustGet(t, s, key, tc.limit)
		want := body
		if tc.truncated {
			want = body[:tc.limit]
		}
		if o.Truncated != tc.truncated || o.Size != size || !bytes.Equal(o.Body, want) {
			t.Errorf("Get(limit %d) = truncated %v, size %d, %d bytes; want truncated %v, size %d, %d bytes",
				tc.limit, o.Truncated, o.Size, len(o.Body), tc.truncated, size, len(want))
		}
	}
}

func testGetMissing(t *testing.T, s Store) {
	key, body := Event("present", ts, "here", nil, 0)
	mustPut(t, s, key, body)
	for _, missing := range []string{
		"events/2026/05/08/absent.json",
		"events/nothing/here.json",
	} {
		for _, limit := range []int64{0, 10} {
			if _, err := s.Get(ctx(t), missing, limit); !errors.Is(err, backend.ErrNotFound) {
				t.Errorf("Get(%s, %d) = %v; want an error wrapping backend.ErrNotFound", missing, limit, err)
			}
		}
	}
}

func list(t *testing.T, s Store, prefix string) ([]string, []int64) {
	t.Helper()
	var keys []string
	var sizes []int64
	err := s.List(ctx(t), prefix, func(key string, size int64) error {
		keys = append(keys, key)
		sizes = append(sizes, size)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys, sizes
}

func testListOrder(t *testing.T, s Store) {
	stamps := []string{"2026-05-09T00:00:01Z", "2026-05-08T23:59:59Z", "2025-12-31T12:00:00Z", "2026-05-08T01:00:00Z"}
	ids := []string{"b-2", "z-1", "a-9", "a-1"}
	sizes := map[string]int64{}
	var all []string
	for i := range ids {
		key, body := Event(ids[i], stamps[i], "listing "+ids[i], nil, 0)
		mustPut(t, s, key, body)
		sizes[key] = int64(len(body))
		all = append(all, key)
	}
	slices.Sort(all)
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"events/", all},
		{"events/2026/", all[1:]},
		{"events/2026/05/08/", []string{"events/2026/05/08/a-1.json", "events/2026/05/08/z-1.json"}},
		{"events/2026/05/08/a", []string{"events/2026/05/08/a-1.json"}},
		{"events/2026/05/0", all[1:]},
		{"events/2027/", nil},
		{"nothing/", nil},
	} {
		keys, got := list(t, s, tc.prefix)
		if !slices.Equal(keys, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, keys, tc.want)
			continue
		}
		for i, k := range keys {
			if got[i] != sizes[k] {
				t.Errorf("List(%q): size of %s = %d, want %d", tc.prefix, k, got[i], sizes[k])
			}
		}
	}
}

// testListMany lists more keys than one S3 page (1000) holds.
func testListMany(t *testing.T, s Store) {
	const n = 1100
	keys := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	c := ctx(t)
	for range 32 {
		wg.Go(func() {
			for i := range keys {
				key, body := Event(fmt.Sprintf("many-%05d", i), ts, "x", nil, 0)
				if stored, err := s.Put(c, key, body); err != nil || !stored {
					mu.Lock()
					failed = fmt.Errorf("Put(%s) = %v, %w", key, stored, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		keys <- i
	}
	close(keys)
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	got, _ := list(t, s, "events/2026/05/08/many-")
	if len(got) != n {
		t.Fatalf("List returned %d keys, want %d", len(got), n)
	}
	for i, k := range got {
		if want := fmt.Sprintf("events/2026/05/08/many-%05d.json", i); k != want {
			t.Fatalf("List key %d = %s, want %s (keys out of order or missing)", i, k, want)
		}
	}
	if got, _ := list(t, s, "events/2026/05/08/many-001"); len(got) != 100 {
		t.Errorf("List(many-001) returned %d keys, want 100", len(got))
	}
}

func testListStops(t *testing.T, s Store) {
	for i := range 5 {
		key, body := Event(fmt.Sprintf("stop-%d", i), ts, "x", nil, 0)
		mustPut(t, s, key, body)
	}
	stop := errors.New("enough")
	calls := 0
	err := s.List(ctx(t), "events/", func(string, int64) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("List with fn failing at call 2 = %v after %d calls; want %v after 2", err, calls, stop)
	}

	c, cancel := context.WithCancel(ctx(t))
	calls = 0
	err = s.List(c, "events/", func(string, int64) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("List with its context cancelled in fn = %v after %d calls; want context.Canceled after 1", err, calls)
	}
}

func testInvalidKeys(t *testing.T, s Store) {
	_, body := Event("bad", ts, "x", nil, 0)
	for _, key := range []string{"", "/events/a.json", "events/../../a.json", "events/./a.json", `events\a.json`, "events//a.json"} {
		if stored, err := s.Put(ctx(t), key, body); err == nil || stored {
			t.Errorf("Put(%q) = %v, %v; want an error", key, stored, err)
		}
	}
	if keys, _ := list(t, s, ""); len(keys) != 0 {
		t.Errorf("invalid keys left objects: %q", keys)
	}
}
