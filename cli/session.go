package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/compare"
)

type sessionOpts struct {
	common
	json  bool
	wide  bool
	limit int
}

func sessionFlags(e *env) (*flag.FlagSet, *sessionOpts) {
	o := &sessionOpts{}
	fs := newFlagSet("session", e)
	o.common.bind(fs)
	fs.BoolVar(&o.json, "json", false, "machine output: one JSON object (docs/compare.md)")
	fs.IntVar(&o.limit, "limit", 500, "turns to read, the newest (0: all)")
	fs.BoolVar(&o.wide, "wide", false, "table output: print each turn's key whole instead of cutting it to 28 columns")
	return fs, o
}

func runSession(ctx context.Context, e *env, args []string) error {
	fs, o := sessionFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(e.stderr, "usage: engram session [--json] [--wide] [--limit N] SESSION_ID")
		return errUsage
	}
	id := fs.Arg(0)
	r, ar, closeAll, err := compareStores(ctx, e, fs, &o.common)
	if err != nil {
		return err
	}
	defer closeAll()
	s, err := readSession(ctx, r, ar != nil, query.TurnReader{Reader: r, Archived: &query.ArchiveTurns{Reader: r, Archive: ar}}, id, o.limit)
	if err != nil {
		return err
	}
	if s.Note != "" {
		fmt.Fprintln(e.stderr, "engram: "+safeLine(s.Note))
	}
	if s.Cut {
		fmt.Fprintf(e.stderr, "engram: only the newest %d turns of the session were read (--limit 0 reads all)\n", o.limit)
	}
	if o.json {
		return writeJSON(e.stdout, s)
	}
	var b strings.Builder
	writeSession(&b, s, termWidth(e), o.wide)
	_, err = io.WriteString(e.stdout, b.String())
	return err
}

// readSession reads the turns of session id (the newest limit of them; 0:
// all) and lays them out. With the archive (archived), an index without
// turn keys has its turns found there.
func readSession(ctx context.Context, r query.Reader, archived bool, tr query.TurnReader, id string, limit int) (*compare.Session, error) {
	rd := r
	if archived {
		rd = tr
	}
	if id == "" { // session:"" is no expression: say what the user asked
		return nil, fmt.Errorf("no session %s in %s", model.Quote(id), r.Describe())
	}
	src := `session:"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(id) + `"`
	var sums []query.TurnSummary
	var after query.Cursor
	note, cut := "", false
	for {
		n := query.MaxPage
		if limit > 0 {
			n = min(n, limit-len(sums))
		}
		p, err := rd.Turns(ctx, src, after, n)
		if err != nil {
			return nil, err
		}
		if note == "" {
			note = p.Note
		}
		sums = append(sums, p.Turns...)
		if p.Next == "" {
			break
		}
		if limit > 0 && len(sums) >= limit {
			cut = true
			break
		}
		after = p.Next
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("no session %s in %s", model.Quote(id), r.Describe())
	}
	turns := make(map[string][]*model.IndexDoc, len(sums))
	for _, t := range sums {
		docs, err := rd.Turn(ctx, t.Key)
		if errors.Is(err, backend.ErrNotFound) {
			continue // gone since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("turn %s: %w", model.Quote(t.Key), err)
		}
		turns[t.Key] = docs
	}
	s := compare.Timeline(id, turns)
	s.Note, s.Cut = note, cut
	return s, nil
}

// writeSession draws the session's turns on a time axis: one row per turn
// (its start after the session's, the idle time before it, its events,
// latency and outcome, and a bar placed on the axis), its steps under it,
// and a line where the idle time between two turns stands out. A turn's
// key is cut to 28 columns unless wide.
func writeSession(b *strings.Builder, s *compare.Session, width int, wide bool) {
	fmt.Fprintf(b, "session %s  ·  %d turns  ·  %s → %s (%s)", printable(s.ID), len(s.Turns), s.First, s.Last, fmtMs(s.SpanMs))
	if len(s.Agents) > 0 {
		fmt.Fprintf(b, "  ·  agents %s", printable(strings.Join(s.Agents, ", ")))
	}
	b.WriteString("\n\n")
	rows := [][]string{{"OFFSET", "IDLE", "TURN", "EVENTS", "LATENCY", "OUTCOME"}}
	for _, t := range s.Turns {
		idle := ""
		if t.IdleBeforeMs != 0 || t.OffsetMs > 0 {
			idle = fmtMs(t.IdleBeforeMs)
		}
		lat := "—"
		if t.LatencyMs != nil {
			lat = fmtMs(*t.LatencyMs)
		}
		key := printable(t.Key)
		if !wide {
			key = cut(key, 28)
		}
		rows = append(rows, []string{"+" + fmtMs(t.OffsetMs), idle, key, fmt.Sprint(t.Events), lat, printable(t.Outcome)})
	}
	// Widths are display widths, as writeTable's: a wide character (a
	// turn "ターン-1") takes two columns.
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for j, c := range row {
			widths[j] = max(widths[j], ansi.StringWidth(c))
		}
	}
	used := 2
	for _, w := range widths {
		used += w + 2
	}
	axis := min(max(width-used-2, 20), 80)
	line := func(row []string) string {
		var l strings.Builder
		l.WriteString("  ")
		for j, c := range row {
			l.WriteString(c + strings.Repeat(" ", widths[j]-ansi.StringWidth(c)+2))
		}
		return l.String()
	}
	b.WriteString(line(rows[0]) + "|" + strings.Repeat(" ", axis) + "|\n")
	for i, t := range s.Turns {
		if t.Gap {
			fmt.Fprintf(b, "  ┄┄ %s idle ┄┄\n", fmtMs(t.IdleBeforeMs))
		}
		b.WriteString(line(rows[i+1]) + "|" + bar(t.OffsetMs, t.DurationMs, s.SpanMs, axis) + "|\n")
		for _, st := range t.Steps {
			extra := ""
			if st.Tool != "" {
				extra += "  " + printable(st.Tool)
			}
			if st.LatencyMs != nil {
				extra += "  " + fmtMs(*st.LatencyMs)
			}
			if st.Success != nil {
				extra += map[bool]string{true: "  ok", false: "  FAILED"}[*st.Success]
			}
			if st.Type != st.Phase {
				extra = "  " + printable(st.Type) + extra
			}
			fmt.Fprintf(b, "      %-9s %-11s  %s%s\n", "+"+fmtMs(st.OffsetMs-t.OffsetMs), st.Phase, printable(st.ID), extra)
		}
	}
}

// bar is a turn's place on an axis of width columns spanning span ms: at
// least one column wide.
func bar(offset, duration, span int64, width int) string {
	if span <= 0 {
		return "█" + strings.Repeat(" ", width-1)
	}
	from := int(offset * int64(width) / (span + 1))
	to := int((offset + duration) * int64(width) / (span + 1))
	from = min(max(from, 0), width-1)
	to = min(max(to, from+1), width)
	return strings.Repeat(" ", from) + strings.Repeat("█", to-from) + strings.Repeat(" ", width-to)
}

// fmtMs is a duration in milliseconds for people: 340ms, 1.2s, 5m02s,
// 2h05m, 3d04h.
func fmtMs(ms int64) string {
	neg := ""
	if ms < 0 {
		neg, ms = "-", -ms
	}
	d := time.Duration(ms) * time.Millisecond
	var s string
	switch {
	case d < time.Second:
		s = fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		s = fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		s = fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		s = fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		s = fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
	return neg + s
}
