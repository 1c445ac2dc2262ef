package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/query/compare"
)

type diffOpts struct {
	common
	json, turn bool
	all        bool
}

func diffFlags(e *env) (*flag.FlagSet, *diffOpts) {
	o := &diffOpts{}
	fs := newFlagSet("diff", e)
	o.common.bind(fs)
	fs.BoolVar(&o.json, "json", false, "machine output: one JSON object (docs/compare.md)")
	fs.BoolVar(&o.turn, "turn", false, "compare two turns (by turn key) step by step instead of two events")
	fs.BoolVar(&o.all, "all", false, "list the fields that are the same too")
	return fs, o
}

// compareStores opens what diff and session read: the index, scoped to the
// tenant, and the archive. An archive that cannot be opened is said on
// stderr and left nil: the index documents are compared instead.
func compareStores(ctx context.Context, e *env, fs *flag.FlagSet, c *common) (query.Reader, ingest.ArchiveReader, func(), error) {
	conf, err := c.resolve(fs, e.getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := openQueryReader(ctx, conf, e)
	if err != nil {
		return nil, nil, nil, err
	}
	st := &backends{data: dataDir(conf.Data, e.getenv)}
	if err := st.openArchive(ctx, conf, e); err != nil {
		fmt.Fprintf(e.stderr, "engram: the archive cannot be opened (%s); comparing index documents\n", safeLine(err.Error()))
		return r, nil, func() { _ = r.Close() }, nil
	}
	return r, st.archive, func() { _ = st.Close(); _ = r.Close() }, nil
}

func runDiff(ctx context.Context, e *env, args []string) error {
	fs, o := diffFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(e.stderr, "usage: engram diff [--json] [--all] EVENT_ID EVENT_ID, or engram diff --turn [--json] [--all] TURN_KEY TURN_KEY")
		return errUsage
	}
	r, ar, closeAll, err := compareStores(ctx, e, fs, &o.common)
	if err != nil {
		return err
	}
	defer closeAll()
	if o.turn {
		return diffTurns(ctx, e, o, r, ar, fs.Arg(0), fs.Arg(1))
	}
	var evs [2]*compare.Event
	var missing []string
	for i, id := range fs.Args() {
		ev, err := compare.Fetch(ctx, r, ar, id, r.Describe())
		var nf *compare.NotFoundError
		if errors.As(err, &nf) {
			missing = append(missing, nf.Error())
			continue
		}
		if err != nil {
			return err
		}
		evs[i] = ev
	}
	if len(missing) > 0 {
		return errors.New(strings.Join(missing, "; "))
	}
	d := compare.Events(evs[0], evs[1])
	if o.json {
		return writeJSON(e.stdout, d)
	}
	var b strings.Builder
	writeSides(&b, d.Left, d.Right)
	writeEventDiff(&b, d, o.all, "")
	_, err = io.WriteString(e.stdout, b.String())
	return err
}

// diffTurns is engram diff --turn.
func diffTurns(ctx context.Context, e *env, o *diffOpts, r query.Reader, ar ingest.ArchiveReader, lkey, rkey string) error {
	tr := r
	if ar != nil {
		// On an index without turn keys, the archive finds the turns.
		tr = query.TurnReader{Reader: r, Archived: &query.ArchiveTurns{Reader: r, Archive: ar}}
	}
	var chains [2][]*compare.Event
	var missing []string
	keys := []string{lkey, rkey}
	for i, key := range keys {
		docs, err := tr.Turn(ctx, key)
		if errors.Is(err, backend.ErrNotFound) || err == nil && len(docs) == 0 {
			missing = append(missing, fmt.Sprintf("no turn %s in %s", model.Quote(key), r.Describe()))
			continue
		}
		if err != nil {
			return fmt.Errorf("turn %s: %w", model.Quote(key), err)
		}
		chains[i] = compare.FetchAll(ctx, ar, docs)
		// An event id of a turn found in the archive: its turn's own key.
		keys[i] = docs[0].TurnKey()
	}
	if len(missing) > 0 {
		return errors.New(strings.Join(missing, "; "))
	}
	d := compare.Turns(keys[0], chains[0], keys[1], chains[1])
	if o.json {
		return writeJSON(e.stdout, d)
	}
	var b strings.Builder
	writeTurnDiff(&b, d, o.all)
	_, err := io.WriteString(e.stdout, b.String())
	return err
}

func writeSides(b *strings.Builder, l, r compare.Side) {
	for _, s := range []struct {
		name string
		side compare.Side
	}{{"left ", l}, {"right", r}} {
		fmt.Fprintf(b, "%s  %s  %s  %s  from the %s\n", s.name, printable(s.side.ID), printable(s.side.Type), printable(s.side.Time), s.side.Source)
		if s.side.Note != "" {
			fmt.Fprintf(b, "       note: %s\n", safeLine(s.side.Note))
		}
	}
}

// writeEventDiff prints the measures, the counts and the fields that
// differ (all of them with all), each line after indent.
func writeEventDiff(b *strings.Builder, d *compare.EventDiff, all bool, indent string) {
	b.WriteString("\n")
	writeDeltas(b, d.Measures, indent)
	c := d.Counts
	fmt.Fprintf(b, "\n%s%d changed, %d only left, %d only right, %d the same\n", indent, c.Changed, c.OnlyLeft, c.OnlyRight, c.Same)
	width := 0
	for _, f := range d.Fields {
		if f.Status != compare.Same || all {
			width = max(width, ansi.StringWidth(printable(f.Path)))
		}
	}
	width = min(width, 32)
	for _, f := range d.Fields {
		writeField(b, f, all, indent, width)
	}
}

// pad is a path made printable, padded to width columns of display (a
// wide character, as in a metadata key "メモ", takes two).
func pad(path string, width int) string {
	p := printable(path)
	return p + strings.Repeat(" ", max(width-ansi.StringWidth(p), 0))
}

func writeDeltas(b *strings.Builder, ds []compare.Delta, indent string) {
	rows := [][]string{{"", "LEFT", "RIGHT", "DELTA"}}
	for _, m := range ds {
		rows = append(rows, []string{m.Name, num(m.Left), num(m.Right), compare.DeltaText(m.Left, m.Right, m.Delta)})
	}
	var t strings.Builder
	_ = writeTable(&t, rows, 200, false)
	for _, line := range strings.SplitAfter(strings.TrimRight(t.String(), "\n"), "\n") {
		b.WriteString(indent + strings.TrimRight(line, " \n") + "\n")
	}
}

func num(p *float64) string {
	if p == nil {
		return "—"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// Fields print as: "~ path  left → right", "- path  left" (only on the
// left), "+ path  right" (only on the right), "= path  value" (with --all);
// a long text's word diff follows on indented lines, with [-removed-] and
// {+added+} words.
func writeField(b *strings.Builder, f compare.Field, all bool, indent string, width int) {
	switch f.Status {
	case compare.Same:
		if all {
			fmt.Fprintf(b, "%s= %s  %s\n", indent, pad(f.Path, width), value(f.Left))
		}
	case compare.OnlyLeft:
		fmt.Fprintf(b, "%s- %s  %s\n", indent, pad(f.Path, width), value(f.Left))
	case compare.OnlyRight:
		fmt.Fprintf(b, "%s+ %s  %s\n", indent, pad(f.Path, width), value(f.Right))
	case compare.Changed:
		if f.Words != nil {
			fmt.Fprintf(b, "%s~ %s\n", indent, printable(f.Path))
			for _, line := range strings.Split(wordDiffText(f.Words, 12), "\n") {
				fmt.Fprintf(b, "%s    %s\n", indent, line)
			}
			return
		}
		s := fmt.Sprintf("%s~ %s  %s → %s", indent, pad(f.Path, width), value(f.Left), value(f.Right))
		if f.Delta != nil {
			s += "  Δ " + compare.DeltaText(compare.NumberOf(f.Left), compare.NumberOf(f.Right), f.Delta)
		}
		b.WriteString(s + "\n")
	}
}

// value is a JSON value on one line, made printable; a long array of
// numbers (an embedding) is only counted, anything over 200 characters cut.
func value(v []byte) string {
	if n, ok := compare.Numbers(v); ok && n > 8 {
		return fmt.Sprintf("[%d numbers]", n)
	}
	return cut(printable(string(v)), 200)
}

// wordDiffText is a word diff as text: kept words as they are (a long run
// of them cut to its first and last context words around "…"), removed
// ones in [-…-], added ones in {+…+}; line breaks kept, every other
// control character escaped.
func wordDiffText(spans []compare.Span, context int) string {
	var b strings.Builder
	for i, s := range spans {
		t := model.Printable(s.Text, true)
		switch s.Op {
		case compare.OpDelete:
			b.WriteString("[-" + t + "-]")
		case compare.OpInsert:
			b.WriteString("{+" + t + "+}")
		default:
			b.WriteString(compare.Elide(t, context, i > 0, i < len(spans)-1))
		}
	}
	return strings.ReplaceAll(b.String(), "\t", "    ")
}

func writeTurnDiff(b *strings.Builder, d *compare.TurnDiff, all bool) {
	for _, s := range []struct {
		name string
		side compare.TurnSide
	}{{"left ", d.Left}, {"right", d.Right}} {
		t := s.side.Totals
		fmt.Fprintf(b, "%s  turn %s  session %s  %s  %d events  outcome %s\n", s.name, printable(s.side.Key),
			printable(s.side.SessionID), printable(s.side.First), t.Events, t.Outcome)
		for _, n := range s.side.Notes {
			fmt.Fprintf(b, "       note: %s\n", safeLine(n))
		}
	}
	b.WriteString("\n")
	writeDeltas(b, d.Deltas, "")
	if d.Left.Totals.Outcome != d.Right.Totals.Outcome {
		fmt.Fprintf(b, "outcome: %s → %s\n", d.Left.Totals.Outcome, d.Right.Totals.Outcome)
	}
	for i, p := range d.Steps {
		fmt.Fprintf(b, "\nstep %d  %s  %s\n", i+1, p.Phase, stepStatus(p.Status))
		for _, s := range []struct {
			name string
			st   *compare.Step
		}{{"left ", p.Left}, {"right", p.Right}} {
			if s.st != nil {
				tool := ""
				if s.st.Tool != "" {
					tool = "  tool " + printable(s.st.Tool)
				}
				fmt.Fprintf(b, "  %s  %s  %s%s  %s  from the %s\n", s.name, printable(s.st.ID), printable(s.st.Type), tool, printable(s.st.Time), s.st.Source)
			}
		}
		if p.Diff != nil && (p.Status == compare.Changed || all) {
			writeEventDiff(b, p.Diff, all, "    ")
		}
	}
}

func stepStatus(s compare.Status) string {
	switch s {
	case compare.OnlyLeft:
		return "only in the left turn"
	case compare.OnlyRight:
		return "only in the right turn"
	case compare.Changed:
		return "differs"
	}
	return "the same"
}
