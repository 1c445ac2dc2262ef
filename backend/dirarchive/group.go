package dirarchive

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// groupCommit runs an expensive, idempotent flush for many callers at once:
// callers that arrive while a flush of the same key runs share the next one,
// so N concurrent writers pay for far fewer than N flushes. That is what
// makes a durable write per event affordable: a flush costs a journal commit
// and a cache flush of the disk whether it covers one file or a hundred.
type groupCommit[K comparable, T any] struct {
	flush func(K, []T) error

	mu      sync.Mutex
	pending map[K]*commitRound[T]
	running map[K]bool
}

type commitRound[T any] struct {
	items []T
	done  chan struct{}
	err   error
}

func newGroupCommit[K comparable, T any](flush func(K, []T) error) *groupCommit[K, T] {
	return &groupCommit[K, T]{flush: flush, pending: map[K]*commitRound[T]{}, running: map[K]bool{}}
}

// do adds item to the next flush of key and waits for that flush.
func (g *groupCommit[K, T]) do(key K, item T) error {
	g.mu.Lock()
	r := g.pending[key]
	if r == nil {
		r = &commitRound[T]{done: make(chan struct{})}
		g.pending[key] = r
	}
	r.items = append(r.items, item)
	leader := !g.running[key]
	if leader {
		g.running[key] = true
	}
	g.mu.Unlock()
	if leader {
		g.lead(key)
	}
	<-r.done
	return r.err
}

// lead flushes rounds of key until none is pending. After a few rounds it
// hands over to a goroutine so that its own caller is not kept serving
// others under constant load.
func (g *groupCommit[K, T]) lead(key K) {
	for round := 0; ; round++ {
		g.mu.Lock()
		if round == 3 && g.pending[key] != nil {
			g.mu.Unlock()
			go g.lead(key)
			return
		}
		r := g.pending[key]
		delete(g.pending, key)
		if r == nil {
			g.running[key] = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		r.err = g.flush(key, r.items)
		close(r.done)
	}
}

// syncData makes the contents of the open files fds durable. One file is
// fsynced; for several, one syncfs(2) of the archive's file system writes
// back every dirty file of it and commits its journal once, instead of once
// per file. The files are all open and written when it runs (their writers
// wait for it), and the file system was opened when the store was, so a
// write-back error since then is reported here (see fileSystem).
func (s *Store) syncData(fds []int) error {
	fs := s.fileSystem()
	if len(fds) == 1 || fs == nil {
		for _, fd := range fds {
			if err := unix.Fsync(fd); err != nil {
				return err
			}
		}
		return nil
	}
	return unix.Syncfs(int(fs.data.Fd()))
}

// syncfsReportsErrors: before Linux 5.8, syncfs returned success even when
// write-back failed, so there each file is fsynced instead.
var syncfsReportsErrors = kernelAtLeast(5, 8)

func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	var ma, mi int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
