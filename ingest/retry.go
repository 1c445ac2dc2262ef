package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"
)

// RetryPolicy bounds how a transient failure is retried: exponential
// backoff with full jitter, at most Attempts tries and Budget in all.
type RetryPolicy struct {
	Attempts int           // default 30
	Initial  time.Duration // first backoff (default 100ms)
	Max      time.Duration // longest backoff (default 5s)
	Budget   time.Duration // longest time spent on one operation (default 3m)
}

func (r RetryPolicy) withDefaults() RetryPolicy {
	if r.Attempts <= 0 {
		r.Attempts = 30
	}
	if r.Initial <= 0 {
		r.Initial = 100 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 5 * time.Second
	}
	if r.Budget <= 0 {
		r.Budget = 3 * time.Minute
	}
	return r
}

// IsTransient reports whether err may go away by itself: a refused, reset
// or broken connection, a timeout, or an error that says so itself
// (Transient() bool; backends mark HTTP 429 and 5xx that way). A cancelled
// context is not transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Outage describes a transient failure being retried, for observers that
// show it while it lasts.
type Outage struct {
	Stage   Stage
	Err     error
	Attempt int
	Wait    time.Duration
	At      time.Time // when the attempt failed
}

func (o Outage) String() string {
	return fmt.Sprintf("%s: %v; retrying in %s (attempt %d)", o.Stage, o.Err, o.Wait.Round(time.Millisecond), o.Attempt)
}

// OutageObserver is an Observer that also wants to hear about retries.
type OutageObserver interface {
	Outage(Outage)
	Recovered(Stage)
}

// Retrier retries transient failures with a RetryPolicy's backoff, telling
// an observer while they last. The pipeline retries its stages with one;
// commands use one for what happens before a pipeline exists (opening a
// store another process holds locked).
type Retrier struct {
	Policy    RetryPolicy
	Transient func(error) bool // IsTransient when nil
	Observer  OutageObserver   // nil: retry silently
}

// Do runs op until it succeeds, fails permanently, or the policy is spent.
// ctx only cuts the waits short; op itself decides on its context. Each
// retry is noted in recs, the stage records of the events op is for.
func (r Retrier) Do(ctx context.Context, s Stage, op func() error, recs ...*StageRecord) error {
	pol := r.Policy.withDefaults()
	transient := r.Transient
	if transient == nil {
		transient = IsTransient
	}
	deadline := time.Now().Add(pol.Budget)
	backoff := pol.Initial
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil {
			if attempt > 1 && r.Observer != nil {
				r.Observer.Recovered(s)
			}
			return nil
		}
		if !transient(err) || attempt >= pol.Attempts || time.Now().After(deadline) {
			if attempt > 1 {
				return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
			}
			return err
		}
		wait := time.Duration(rand.Int64N(int64(backoff))) + backoff/2
		o := Outage{Stage: s, Err: err, Attempt: attempt, Wait: wait, At: time.Now()}
		for _, rec := range recs {
			rec.Retries = append(rec.Retries, o)
		}
		if r.Observer != nil {
			r.Observer.Outage(o)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
		backoff = min(2*backoff, pol.Max)
	}
}

// retry is Do with the pipeline's policy, classification and observer.
func (p *Pipeline) retry(ctx context.Context, s Stage, op func() error, recs ...*StageRecord) error {
	oo, _ := p.cfg.Observer.(OutageObserver)
	return Retrier{p.cfg.Retry, p.transient, oo}.Do(ctx, s, op, recs...)
}
