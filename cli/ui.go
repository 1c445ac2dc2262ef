package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"engram/model"
	"engram/query"
	"engram/themes"
	"engram/ui"
	"engram/ui/uikit"
)

// uiOpts are the flags of the inspector (engram with no command).
type uiOpts struct {
	common
	readonly bool
	theme    string
	follow   fileList
	buffer   int
	demo     bool
	mouse    bool
	// hopTimeout is ui.hop_timeout, read with the other settings.
	hopTimeout time.Duration
}

// fileList is a repeatable flag.
type fileList []string

func (l *fileList) String() string     { return strings.Join(*l, ",") }
func (l *fileList) Set(v string) error { *l = append(*l, v); return nil }

func uiFlags(e *env) (*flag.FlagSet, *uiOpts) {
	o := &uiOpts{}
	fs := newFlagSet("ui", e)
	o.common.bind(fs)
	fs.BoolVar(&o.readonly, "readonly", false, "inspect only: no record form, no --follow, no export")
	fs.StringVar(&o.theme, "theme", "", "colour theme: "+strings.Join(themes.Names(), ", ")+" (default: from the terminal's background; NO_COLOR turns colour off)")
	fs.Var(&o.follow, "follow", "ingest the lines appended to this JSON-lines `FILE` as they come (repeatable)")
	fs.IntVar(&o.buffer, "buffer", 10000, "stream rows held in memory; older ones are read again from the index when scrolled to")
	fs.BoolVar(&o.mouse, "mouse", false, "capture the mouse: the wheel scrolls, a click selects a row or a tab (the terminal's own text selection then needs shift)")
	fs.BoolVar(&o.demo, "demo", false, "open on a fresh temporary demo data set, with a simulated agent adding a turn every second or two")
	return fs, o
}

// runUI opens the inspector on the configured backends. A backend that
// cannot be opened is shown in the inspector, with what to do, rather
// than printed: the inspector is where the user is looking.
func runUI(ctx context.Context, e *env, args []string) error {
	fs, o := uiFlags(e)
	if err := parseNone(fs, args, e); err != nil {
		return err
	}
	if o.theme != "" {
		if _, err := themes.ByName(o.theme); err != nil {
			fmt.Fprintf(e.stderr, "engram: --theme: %s\n", safeLine(err.Error()))
			return errUsage
		}
	}
	if err := needTerminal(e); err != nil {
		return err
	}
	if o.readonly && len(o.follow) > 0 {
		fmt.Fprintln(e.stderr, "engram: --follow ingests, which --readonly forbids")
		return errUsage
	}
	if o.demo {
		dir, stop, err := startDemo(ctx, e)
		if err != nil {
			return err
		}
		defer stop()
		_ = fs.Set("data", dir)
	}
	deps, closeAll := openUIDeps(ctx, o, fs, e)
	defer closeAll()
	return ui.Run(ctx, deps, uikit.Options{
		ReadOnly: o.readonly, Demo: o.demo, Mouse: o.mouse, Theme: o.theme, NoColor: e.getenv("NO_COLOR") != "",
		Follow: o.follow, BufferRows: o.buffer, HopTimeout: o.hopTimeout, In: e.stdin, Out: e.stdout,
	})
}

// needTerminal: the inspector draws on a terminal and reads its keys; run
// from a script or a pipe, say so instead of failing deep in Bubble Tea.
func needTerminal(e *env) error {
	for _, s := range []any{e.stdin, e.stdout} {
		if f, ok := s.(*os.File); ok && !term.IsTerminal(f.Fd()) {
			return errors.New("the inspector needs a terminal on stdin and stdout; from scripts use engram tail, search, turns or show")
		}
	}
	return nil
}

// openUIDeps opens the reader, the archive and (unless read-only) the
// pipeline the record form and --follow write through.
func openUIDeps(ctx context.Context, o *uiOpts, fs *flag.FlagSet, e *env) (uikit.Deps, func()) {
	d := uikit.Deps{Backend: "embedded", Profile: "default", NewID: decodeOptions().NewID}
	closers := []func() error{}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		d.Err, d.Hint = err, "Fix the config file or the flags; 'engram config' shows what is in effect."
		return d, closeAll
	}
	d.Backend = conf.Index + " + " + conf.Archive
	d.TraceURL = conf.Trace.URL
	o.hopTimeout = conf.UI.HopTimeout
	d.DataDir = dataDir(conf.Data, e.getenv)
	if conf.profile != "" {
		d.Profile = conf.profile
	}
	bus, closeBus, err := openUIBus(conf, d.DataDir)
	if err != nil {
		d.Err, d.Hint = err, "Fix the kafka.* settings; 'engram config' shows what is in effect."
		return d, closeAll
	}
	if bus != nil {
		d.Bus = bus
		closers = append(closers, closeBus)
	}
	if !o.readonly && len(o.follow) == 0 && embeddedReadOnly(conf, e) {
		// Read-only media: nothing can be recorded there, but all can be read.
		o.readonly = true
	}
	if !o.readonly {
		st, err := openBackends(ctx, conf, e)
		if err != nil {
			d.Err, d.Hint = err, backendHint(conf)
			return d, closeAll
		}
		closers = append(closers, st.Close)
		d.Archive = st.archive
		cfg := st.pipeline()
		cfg.Transient = transient
		d.Recorder = newRejectingRecorder(tracedRecorder{ui.PipelineRecorder{Config: cfg}, st.tel}, d.DataDir)
		closers = append(closers, d.Recorder.(rejectingRecorder).rejects.Close)
	}
	r, err := openReader(&queryOpts{common: o.common}, fs, e)
	if err != nil {
		d.Err, d.Hint = err, readerHint(o.readonly)
		return d, closeAll
	}
	closers = append(closers, r.Close)
	d.Reader = r
	if eng, _, err := recallEngine(ctx, conf, r); err == nil {
		d.Recall = eng // the Recall view; hidden when the index cannot recall
	}
	if o.readonly {
		b := &backends{data: dataDir(conf.Data, e.getenv)}
		if err := b.openArchive(ctx, conf, e); err != nil {
			d.Err, d.Hint = err, backendHint(conf)
			return d, closeAll
		}
		d.Archive = b.archive
	}
	if _, ok := r.(query.FieldCoverage); ok && d.Archive != nil {
		// An index that can say its documents lack the turn key (one the
		// source system wrote): the Turns view and the detail find turns
		// in the archive (query.ArchiveTurns), as engram turn does. The
		// inspector asks the coverage itself, off its UI goroutine, and
		// marks the header.
		d.Reader = query.TurnReader{Reader: r, Archived: &query.ArchiveTurns{Reader: r, Archive: d.Archive}}
	}
	if fb, ok := d.Bus.(*fileBus); ok {
		fb.indexedAt = indexedAt(d.Reader)
	}
	return d, closeAll
}

// indexedAt is when the index took an event (its ingested_at), zero when
// it does not have it or does not say.
func indexedAt(r interface {
	Document(ctx context.Context, id string) (*model.IndexDoc, error)
}) func(context.Context, string) time.Time {
	return func(ctx context.Context, id string) time.Time {
		d, err := r.Document(ctx, id)
		if err != nil || d.IngestedAt == "" {
			return time.Time{}
		}
		t, _ := time.Parse(time.RFC3339Nano, d.IngestedAt)
		return t
	}
}

func backendHint(conf *resolved) string {
	return fmt.Sprintf("Check the %s archive and the %s index settings ('engram config' shows them and where each comes from). "+
		"An empty data directory is fine: the embedded stores are created in it.", conf.Archive, conf.Index)
}

func readerHint(readonly bool) string {
	if readonly {
		return "Ingest something first ('engram ingest FILE' or 'engram demo'), open engram without --readonly to create an empty index, or point --data at an existing one."
	}
	return "The inspector reads the embedded SQLite index; check --data and --index ('engram config')."
}
