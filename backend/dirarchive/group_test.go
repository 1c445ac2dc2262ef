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
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if !errors.Is(err, boom) {
				t.Fatalf("item %d: %v", i, err)
			}
		}
	}
	if errs[13] == nil || failed == n {
		t.Fatalf("item 13 error %v, %d of %d failed", errs[13], failed, n)
	}
}
