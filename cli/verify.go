package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"engram/ingest"
	"engram/ingest/publish"
	"engram/model"
	"engram/query/verify"
)

type verifyOpts struct {
	common
	since, until string
	json         bool
	max          int
	noTopics     bool
}

func verifyFlags(e *env) (*flag.FlagSet, *verifyOpts) {
	o := &verifyOpts{}
	fs := newFlagSet("verify", e)
	o.common.bind(fs)
	fs.StringVar(&o.since, "since", "", "first day to check, YYYY-MM-DD (UTC)")
	fs.StringVar(&o.until, "until", "", "last day to check, YYYY-MM-DD (UTC)")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.IntVar(&o.max, "max-diffs", 20, "how many differences to list")
	fs.BoolVar(&o.noTopics, "no-topics", false, "do not check the notifications (every indexed event announced on experience.enriched and memory.indexed, nothing else)")
	return fs, o
}

func parseDay(flagName, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return t, fmt.Errorf("--%s %q: want a day like 2026-05-08", flagName, s)
	}
	return t, nil
}

// dayRange reads --since and --until; a bad day or an empty range is a
// usage error.
func dayRange(e *env, since, until string) (from, to time.Time, err error) {
	if from, err = parseDay("since", since); err == nil {
		to, err = parseDay("until", until)
	}
	if err == nil && !from.IsZero() && !to.IsZero() && to.Before(from) {
		err = fmt.Errorf("--until %s is before --since %s", until, since)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "engram: %s\n", safeLine(err.Error()))
		return from, to, errUsage
	}
	return from, to, nil
}

// requireStores refuses to work on embedded stores that do not exist: a
// mistyped --data would otherwise create empty ones and report on them.
func requireStores(conf *resolved, e *env) error {
	if err := requireArchive(conf, e); err != nil {
		return err
	}
	data := dataDir(conf.Data, e.getenv)
	if conf.Index == "sqlite" {
		if _, err := os.Stat(filepath.Join(data, "index.db")); err != nil {
			return fmt.Errorf("no index at %s (pass --data; 'engram reindex' rebuilds a lost index)", filepath.Join(data, "index.db"))
		}
	}
	return nil
}

// requireArchive: see requireStores.
func requireArchive(conf *resolved, e *env) error {
	dir := filepath.Join(dataDir(conf.Data, e.getenv), "archive")
	if _, err := os.Stat(dir); err != nil && conf.Archive == "dir" {
		return fmt.Errorf("no archive at %s (pass --data, or --archive s3)", dir)
	}
	return nil
}

// runVerify compares the archive and the index; exit 1 when they disagree.
func runVerify(ctx context.Context, e *env, args []string) error {
	fs, o := verifyFlags(e)
	if err := parseNone(fs, args, e); err != nil {
		return err
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return err
	}
	opt := verify.Options{MaxDiffs: o.max}
	if opt.Since, opt.Until, err = dayRange(e, o.since, o.until); err != nil {
		return err
	}
	if err := requireStores(conf, e); err != nil {
		return err
	}
	st, err := openReadBackends(ctx, conf, e)
	if err != nil {
		return err
	}
	defer st.Close()
	if r, ok := st.index.(interface{ Refresh(context.Context) error }); ok {
		if err := r.Refresh(ctx); err != nil {
			return err
		}
	}
	if !o.noTopics {
		opt.Topics = st.topicSources()
		opt.Held = func() (map[string]bool, error) { return ingest.HeldIDs(filepath.Join(st.data, outboxFile)) }
	}
	if opt.Pending, err = pendingKeys(st); err != nil {
		return err
	}
	rep := newReporter(e, false, nil)
	opt.Progress = func(p verify.Progress) { rep.line(fmt.Sprintf("verify: %d objects, %d documents", p.Objects, p.Docs)) }
	scan, ok := st.index.(verify.DocScanner)
	if !ok {
		return fmt.Errorf("verify: %s cannot be scanned in archive-key order", st.index.Describe())
	}
	res, err := verify.Run(ctx, st.archive, scan, opt)
	rep.line("")
	if err != nil {
		return err
	}
	printVerify(e, res, o.json, st.describe())
	if !res.OK() {
		return exitError{1}
	}
	return nil
}

// pendingKeys are the archive keys of the data directory's pending
// journal: events a run archived and the next one indexes.
func pendingKeys(st *backends) (map[string]bool, error) {
	ps, err := ingest.OpenJournal(filepath.Join(st.data, journalFile)).Load()
	if err != nil {
		return nil, fmt.Errorf("pending journal: %w", err)
	}
	keys := make(map[string]bool, len(ps))
	for _, p := range ps {
		keys[p.Key] = true
	}
	return keys, nil
}

func printVerify(e *env, r *verify.Report, asJSON bool, where string) {
	if asJSON {
		b, _ := json.Marshal(r)
		_, _ = e.stdout.Write(append(model.SafeJSON(b), '\n'))
		return
	}
	fmt.Fprintf(e.stdout, "%s: %d archived objects, %d index documents (%s)\n",
		safeLine(where), r.Objects, r.Docs, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(e.stdout, "  archive and index: %d agree\n", r.Agreeing)
	if n := r.Notifications; n != nil {
		fmt.Fprintf(e.stdout, "  notifications (%s): %d of %d indexed events announced, %d unannounced\n",
			safeLine(strings.Join(n.Topics, ", ")), n.Announced, n.Indexed, n.Unannounced)
	}
	if r.InFlight > 0 {
		fmt.Fprintf(e.stdout, "%d events skipped as in flight (being ingested meanwhile, or pending in the journal)\n", r.InFlight)
	}
	if r.OK() {
		fmt.Fprintln(e.stdout, "the layers agree")
		return
	}
	switch {
	case r.IndexOK():
		fmt.Fprintln(e.stdout, "the archive and the index agree; the notifications do not")
	case r.NotificationsOK():
		fmt.Fprintln(e.stdout, "the archive and the index disagree; the notifications agree with the index")
	}
	if r.OnlyUnannounced() {
		fmt.Fprintf(e.stdout, "to close it: 'engram reindex --announce' announces the indexed events (consumers may see an event twice), or 'engram verify --no-topics' when nothing consumes those topics\n")
	}
	kinds := make([]string, 0, len(r.Counts))
	for k := range r.Counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(e.stdout, "  %-16s %d\n", k, r.Counts[k])
	}
	fmt.Fprintln(e.stdout, "first differences:")
	for _, d := range r.First {
		fmt.Fprintf(e.stdout, "  %s %s %s: %s\n", d.Kind, safeLine(d.Key), safeLine(d.EventID), safeLine(d.Detail))
	}
}

// topicSources are the notification topics of b, as verify reads them:
// the Kafka topics when notifications go to Kafka, else the topic files.
func (b *backends) topicSources() []verify.TopicSource {
	if b.kafkaCfg != nil {
		return kafkaTopicSources(*b.kafkaCfg)
	}
	dir := b.topicsDir
	var out []verify.TopicSource
	for _, name := range []string{model.TopicEnriched, model.TopicIndexed} {
		out = append(out, verify.TopicSource{Name: name, Scan: func(_ context.Context, fn func(verify.Notice) error) error {
			where := publish.TopicPath(dir, name)
			return publish.ReadTopic(dir, name, func(m publish.TopicMessage) error {
				return fn(verify.Notice{EventID: m.EventID, Key: m.Key, Where: fmt.Sprintf("%s:%d", where, m.Line),
					Err: m.Err, Cut: errors.Is(m.Err, publish.ErrCutLine)})
			})
		}})
	}
	return out
}
