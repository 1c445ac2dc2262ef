package backend

import "errors"

// The errors every backend returns (wrapped, with what was asked for), so
// that callers tell the cases apart with errors.Is whichever backend
// answered.
var (
	// ErrNotFound: no archived object under the key, no index document with
	// the event id, no turn with the key.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable: the backend cannot answer this kind of question (for
	// instance similarity on a cluster without the k-NN plugin).
	ErrUnavailable = errors.New("unavailable")
	// ErrReadOnly: a write through a store opened for reading.
	ErrReadOnly = errors.New("opened read-only")
	// ErrClosed: an operation on a closed store.
	ErrClosed = errors.New("closed")
)
