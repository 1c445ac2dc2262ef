package dirarchive

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestGroupCommitShares: callers arriving while a flush runs share the next
// one, every item is flushed exactly once, before its caller returns, and a
// failed flush fails every caller it covered, and only those.
func TestGroupCommitShares(t *testing.T) {
	var mu sync.Mutex
	flushed := map[int]int{}
	failing := map[int]bool{} // the items of the flush that failed
	flushes := 0
	boom := errors.New("boom")
	g := newGroupCommit(func(_ string, items []int) error {
		time.Sleep(2 * time.Millisecond) // a flush takes a while: others queue up
		mu.Lock()
		defer mu.Unlock()
		flushes++
		var err error
		for _, it := range items {
			flushed[it]++
			if it == 13 {
				err = boom
			}
		}
		if err != nil {
			for _, it := range items {
				failing[it] = true
			}
		}
		return err
	})
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.do("k", i)
			mu.Lock()
			defer mu.Unlock()
			if flushed[i] != 1 {
				t.Errorf("item %d returned after %d flushes of it", i, flushed[i])
			}
		}()
	}
	wg.Wait()
	if flushes >= n/4 {
		t.Fatalf("%d flushes for %d callers: not shared", flushes, n)
	}
	// Which items share the failed flush depends on the scheduling (on a
	// loaded machine one flush can take them all); that exactly they fail
	// does not.
	for i, err := range errs {
		if failing[i] != (err != nil) || err != nil && !errors.Is(err, boom) {
			t.Fatalf("item %d: in the failed flush %v, error %v", i, failing[i], err)
		}
	}
	if !failing[13] {
		t.Fatal("item 13's flush did not fail")
	}
	// A failure is the flush's, not the key's: the next flush succeeds.
	if err := g.do("k", n); err != nil {
		t.Fatalf("a flush after the failed one: %v", err)
	}
}
