package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/progress"
	"github.com/charmbracelet/x/term"

	"engram/ingest"
	"engram/ingest/publish"
	"engram/model"
)

// reporter prints what an ingest run does: per-input errors and traces as
// they finish, a progress line while it runs, a summary at the end.
type reporter struct {
	e       *env
	trace   bool
	rejects *publish.Rejects
	tty     bool
	colour  bool // the bar may be coloured: a terminal, and no NO_COLOR

	mu        sync.Mutex // serialises writes to stderr and stdout
	finished  atomic.Int64
	bytesRead atomic.Int64
	total     atomic.Int64
	start     time.Time
	lastBar   int
	outages   map[ingest.Stage]time.Time
	redact    func(string) string
	inputs    []*input // one per file named, in order
}

// input is how far one named input was read, for the account of an
// interrupted run.
type input struct {
	name string
	size int64 // of a regular file; -1 for a stream (stdin, pipe, device)
	read atomic.Int64
	done atomic.Bool // read to its end
}

func newInputs(files []string) []*input {
	ins := make([]*input, len(files))
	for i, name := range files {
		ins[i] = &input{name: displayName(name), size: -1}
		if st, err := os.Stat(name); name != "-" && err == nil && st.Mode().IsRegular() {
			ins[i].size = st.Size()
		}
	}
	return ins
}

// unread says, after an interruption, what of the input was left unread:
// the bytes of each file not read to its end, and the streams cut short.
func (r *reporter) unread() {
	var parts []string
	for _, in := range r.inputs {
		switch read := in.read.Load(); {
		case in.done.Load():
		case in.size >= 0:
			parts = append(parts, fmt.Sprintf("read %d of the %d bytes of %s, %d left unread", read, in.size, in.name, max(in.size-read, 0)))
		default:
			parts = append(parts, fmt.Sprintf("%s not read to its end", in.name))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintln(r.e.stderr, safeLine("interrupted: "+strings.Join(parts, "; ")))
	}
}

func newReporter(e *env, trace bool, rejects *publish.Rejects) *reporter {
	r := &reporter{e: e, trace: trace, rejects: rejects, start: time.Now(), redact: func(s string) string { return s }}
	if f, ok := e.stderr.(*os.File); ok {
		r.tty = term.IsTerminal(f.Fd())
	}
	r.colour = r.tty && e.getenv("NO_COLOR") == ""
	return r
}

// Stage and Done satisfy ingest.Observer; traces arrive through done.
func (r *reporter) Stage(ingest.StageEvent) {}

// Done is a no-op: Run hands each trace to done as well.
func (r *reporter) Done(*ingest.Trace) {}

// Outage says, at most every few seconds per stage, that a server is not
// answering and the run is waiting for it.
func (r *reporter) Outage(o ingest.Outage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outages == nil {
		r.outages = map[ingest.Stage]time.Time{}
	}
	if last, ok := r.outages[o.Stage]; ok && time.Since(last) < 3*time.Second {
		return
	}
	r.outages[o.Stage] = time.Now()
	r.clearBar()
	fmt.Fprintf(r.e.stderr, "engram: outage: %s\n", safeLine(r.redact(o.String())))
}

// Recovered says the outage of a stage is over.
func (r *reporter) Recovered(s ingest.Stage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.outages[s]; !ok {
		return
	}
	delete(r.outages, s)
	r.clearBar()
	fmt.Fprintf(r.e.stderr, "engram: %s: server answering again, resuming\n", s)
}

func (r *reporter) addTotal(n int64) { r.total.Add(n) }

// done is called by the pipeline for each finished input.
func (r *reporter) done(t *ingest.Trace) {
	r.finished.Add(1)
	if t.Outcome == ingest.OutcomeRejected && r.rejects != nil {
		if err := r.rejects.Add(capReject(t)); err != nil {
			r.printErr(fmt.Sprintf("engram: writing rejects: %v", err))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearBar()
	switch t.Outcome {
	case ingest.OutcomeRejected:
		for _, p := range problemsOf(t) {
			fmt.Fprintf(r.e.stderr, "%s: %s\n", safeLine(t.Src.String()), safeLine(p.String()))
		}
	case ingest.OutcomeFailed, ingest.OutcomeCanceled:
		fmt.Fprintf(r.e.stderr, "%s: %s: %s\n", safeLine(t.Src.String()), t.Outcome, safeLine(fmt.Sprint(t.Err)))
	}
	if r.trace {
		fmt.Fprintln(r.e.stdout, safeLine(t.Render()))
	}
}

// maxRejectInput is the most of one rejected input the rejects file
// keeps: enough to see what was wrong, and a run of long bad lines (or
// input that is not text) cannot fill the disk with copies of itself.
const maxRejectInput = 64 << 10

// capReject is t with its input cut to maxRejectInput bytes, the cut said
// among its problems; t itself is left whole for the trace.
func capReject(t *ingest.Trace) *ingest.Trace {
	if len(t.Input) <= maxRejectInput {
		return t
	}
	n := maxRejectInput
	for n > 0 && !utf8.RuneStart(t.Input[n]) {
		n-- // not inside a character
	}
	c := *t
	c.Input = t.Input[:n]
	c.Problems = append(slices.Clip(t.Problems), model.Problem{
		Reason: fmt.Sprintf("input cut to its first %d of %d bytes in this file", n, len(t.Input)),
	})
	return &c
}

func problemsOf(t *ingest.Trace) model.Problems {
	if len(t.Problems) > 0 {
		return t.Problems
	}
	return model.Problems{{Reason: fmt.Sprint(t.Err)}}
}

// line shows a transient status line on a terminal ("" clears it); it
// prints nothing elsewhere, so logs stay clean.
func (r *reporter) line(s string) {
	if !r.tty {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearBar()
	if s != "" {
		fmt.Fprint(r.e.stderr, safeLine(s))
		r.lastBar = len(s)
	}
}

func (r *reporter) printErr(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearBar()
	fmt.Fprintln(r.e.stderr, safeLine(s))
}

// startProgress draws a progress bar on a terminal every 100ms, or a plain
// line every 5s when stderr is not one. It returns a function that stops it.
func (r *reporter) startProgress(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		every := 5 * time.Second
		if r.tty {
			every = 100 * time.Millisecond
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		bar := progress.New(progress.WithWidth(30), progress.WithoutPercentage())
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				r.drawProgress(&bar)
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		r.mu.Lock()
		r.clearBar()
		r.mu.Unlock()
	}
}

func (r *reporter) drawProgress(bar *progress.Model) {
	n := r.finished.Load()
	elapsed := time.Since(r.start)
	rate := float64(n) / elapsed.Seconds()
	line := fmt.Sprintf("%d events  %.0f/s", n, rate)
	total, read := r.total.Load(), r.bytesRead.Load()
	var frac float64
	if total > 0 {
		frac = min(1, float64(read)/float64(total))
		if frac > 0 {
			eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
			line = fmt.Sprintf("%3.0f%%  %s  ETA %s", 100*frac, line, eta.Round(time.Second))
			if r.tty { // plain lines (a pipe, a file) go without the bar
				line = r.barView(bar, frac) + " " + line
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tty {
		r.clearBar()
		fmt.Fprint(r.e.stderr, line)
		r.lastBar = len(line)
	} else {
		fmt.Fprintln(r.e.stderr, "progress: "+line)
	}
}

// barView is the bar at frac: coloured, or in plain characters when
// colour is off.
func (r *reporter) barView(bar *progress.Model, frac float64) string {
	if r.colour {
		return bar.ViewAs(frac)
	}
	const w = 30
	n := int(frac*w + 0.5)
	return strings.Repeat("█", n) + strings.Repeat("░", w-n)
}

// clearBar erases the progress line so other output starts at column 0.
func (r *reporter) clearBar() {
	if r.tty && r.lastBar > 0 {
		fmt.Fprint(r.e.stderr, "\r\x1b[2K")
		r.lastBar = 0
	}
}

func (r *reporter) summary(s ingest.Summary, data string, dryRun bool) {
	var b strings.Builder
	if dryRun {
		fmt.Fprintf(&b, "dry run: %d valid, %d rejected, %d failed", s.Valid, s.Rejected, s.Failed)
	} else {
		fmt.Fprintf(&b, "ingested %d, duplicates %d, rejected %d, failed %d", s.Ingested, s.Duplicates, s.Rejected, s.Failed)
	}
	if s.Canceled > 0 {
		fmt.Fprintf(&b, ", not ingested (interrupted) %d", s.Canceled)
	}
	fmt.Fprintf(&b, " in %s (%.0f events/s)", s.Elapsed.Round(time.Millisecond), s.Rate())
	if !dryRun {
		fmt.Fprintf(&b, "; data %s", data)
	}
	fmt.Fprintln(r.e.stderr, safeLine(b.String()))
	if r.rejects != nil && r.rejects.Written() {
		fmt.Fprintf(r.e.stderr, "rejected inputs written to %s\n", safeLine(r.rejects.Path()))
	}
}

// countingReader counts bytes read into n (every input's) and own (this
// input's).
type countingReader struct {
	r      io.Reader
	n, own *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	c.own.Add(int64(n))
	return n, err
}

func printable(s string) string { return model.Printable(s, false) }
