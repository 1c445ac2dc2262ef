package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"engram/backend/kafka"
	"engram/ingest"
	"engram/ingest/worker"
)

type workerOpts struct {
	common
	drain time.Duration
	every time.Duration
}

func workerFlags(e *env) (*flag.FlagSet, *workerOpts) {
	o := &workerOpts{}
	fs := newFlagSet("worker", e)
	o.common.bind(fs)
	fs.DurationVar(&o.drain, "drain", 10*time.Second, "on SIGINT/SIGTERM, how long the events in flight may take to finish (the rest are read again by the next worker)")
	fs.DurationVar(&o.every, "status-every", 10*time.Second, "how often a status line is printed when stderr is not a terminal (on one, the line is redrawn in place every second)")
	return fs, o
}

// runWorker consumes the raw topic in the consumer group and runs every
// message through the pipeline into the configured stores, until
// interrupted.
func runWorker(ctx context.Context, e *env, args []string) error {
	fs, o := workerFlags(e)
	if err := parseNone(fs, args, e); err != nil {
		return err
	}
	conf, kcfg, err := resolveKafka(&o.common, fs, e, "worker")
	if err != nil {
		return err
	}
	ingestGC() // a worker is a long ingest too
	st, err := openBackends(ctx, conf, e)
	if err != nil {
		return err
	}
	defer st.Close()
	cons, err := openConsumer(ctx, kcfg, conf)
	if err != nil {
		return err
	}
	defer cons.Close()
	m := worker.NewMetrics()
	rep := newReporter(e, false, nil)
	rep.redact = conf.redact
	cfg := st.pipeline()
	cfg.Observer, cfg.Transient = st.observe(workerObserver{rep, m}), transient
	// A worker outlives outages: transient failures are retried until they
	// pass or the worker is stopped, never given up on after a budget.
	cfg.Retry = ingest.RetryPolicy{Attempts: math.MaxInt32, Budget: 100 * 365 * 24 * time.Hour}
	p, err := ingest.New(cfg)
	if err != nil {
		return err
	}
	if err := recoverPending(ctx, e, p, cfg.Journal, st.archive); err != nil {
		return err
	}
	if stop, err := serveHealth(conf, m, e); err != nil {
		return err
	} else {
		defer stop()
	}
	avro := "Avro messages rejected: no schema registry (kafka.schema_registry_url)"
	if kcfg.Registry.URL != "" {
		avro = "Avro through " + kcfg.Registry.URL
	}
	fmt.Fprintf(e.stderr, "engram worker: group %s on %s (%s), into %s; JSON, %s\n", safeLine(kcfg.Group), safeLine(kcfg.Topics.Raw), safeLine(strings.Join(kcfg.Brokers, ",")), safeLine(st.describe()), safeLine(conf.redact(avro)))
	var finished atomic.Int64
	stopStatus := workerStatus(ctx, rep, o.every, kcfg, m, &finished)
	sum, err := worker.Run(ctx, worker.Config{
		Pipeline: p, Consumer: cons, Drain: o.drain,
		Done:    func(t *ingest.Trace, _ *kafka.Record) { m.Observe(t); finished.Add(1); rep.done(t) },
		Logf:    func(f string, a ...any) { rep.printErr("engram worker: " + conf.redact(fmt.Sprintf(f, a...))) },
		Waiting: fmt.Sprintf("Kafka (brokers %s, group %s on %s)", strings.Join(kcfg.Brokers, ","), kcfg.Group, kcfg.Topics.Raw),
		Outage: func(err error) {
			if err == nil {
				m.SetOutage("")
				return
			}
			m.SetOutage("kafka: " + conf.redact(err.Error()))
		},
		Recheck: func(ctx context.Context) error {
			return recheckTopics(ctx, kcfg, kcfg.Topics.Raw, kcfg.Topics.Rejected)
		},
	})
	stopStatus()
	fmt.Fprintf(e.stderr, "engram worker: stopped: ingested %d, duplicates %d, rejected %d, failed %d\n", sum.Ingested, sum.Duplicates, sum.Rejected, sum.Failed)
	return err
}

// openConsumer joins the group once the raw and rejected topics are known
// to exist.
func openConsumer(ctx context.Context, cfg kafka.Config, conf *resolved) (*kafka.Consumer, error) {
	c, err := kafka.New(cfg)
	if err != nil {
		return nil, errors.New(conf.redact(err.Error()))
	}
	err = checkTopics(ctx, c, conf, cfg.Topics.Raw, cfg.Topics.Rejected)
	_ = c.Close()
	if err != nil {
		return nil, err
	}
	cons, err := kafka.NewConsumer(cfg, kafka.ConsumerOptions{SessionTimeout: conf.Kafka.SessionTimeout})
	if err != nil {
		return nil, errors.New(conf.redact(err.Error()))
	}
	return cons, nil
}

// recheckTopics asks the brokers, back after an outage, whether the
// topics are still there; the error keeps its kind for kafka.Fatal.
func recheckTopics(ctx context.Context, cfg kafka.Config, topics ...string) error {
	c, err := kafka.New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, kafkaCheckTimeout)
	defer cancel()
	return c.CheckTopics(ctx, topics...)
}

// workerObserver reports outages to the terminal and to /health.
type workerObserver struct {
	rep *reporter
	m   *worker.Metrics
}

func (w workerObserver) Stage(ingest.StageEvent) {}
func (w workerObserver) Done(*ingest.Trace)      {}
func (w workerObserver) Outage(o ingest.Outage) {
	w.rep.Outage(o)
	w.m.SetOutage(o.Stage.String() + ": " + w.rep.redact(o.Err.Error()))
}
func (w workerObserver) Recovered(s ingest.Stage) { w.rep.Recovered(s); w.m.SetOutage("") }

// serveHealth serves GET /health and GET /metrics when a port is set.
func serveHealth(conf *resolved, m *worker.Metrics, e *env) (stop func(), err error) {
	port := conf.Worker.HealthPort
	if port == "" || conf.Worker.DisableHealth {
		return func() {}, nil
	}
	addr := net.JoinHostPort(conf.Worker.HealthAddr, port)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health server on %s: %w (set HEALTH_PORT to a free port, or DISABLE_HEALTH_SERVER=true)", addr, err)
	}
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(e.stderr, "engram worker: health on http://%s/health, metrics on /metrics\n", ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// workerStatus shows the worker's progress: on a terminal one line
// redrawn in place every second, elsewhere a plain line every so often.
// It keeps the group's lag current for /health and /metrics.
func workerStatus(ctx context.Context, rep *reporter, every time.Duration, cfg kafka.Config, m *worker.Metrics, finished *atomic.Int64) (stop func()) {
	if rep.tty {
		every = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		admin, err := kafka.New(cfg)
		if err != nil {
			return
		}
		defer admin.Close()
		tick := time.NewTicker(every)
		defer tick.Stop()
		last, lastAt := int64(0), time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
			lag, err := admin.GroupLag(lctx, cfg.Group)
			lcancel()
			m.SetLag(lag, err)
			n, now := finished.Load(), time.Now()
			rate := float64(n-last) / now.Sub(lastAt).Seconds()
			showStatus(rep, statusLine(n, rate, m.Health(), err))
			last, lastAt = n, now
		}
	}()
	return func() { cancel(); <-done; rep.line("") }
}

// statusLine is the worker's progress in one line.
func statusLine(n int64, rate float64, h worker.Health, lagErr error) string {
	lag := fmt.Sprintf("lag %d", h.Lag)
	if lagErr != nil {
		lag = "lag unknown"
	}
	return fmt.Sprintf("engram worker: %d finished (%.0f/s), ingested %d, duplicates %d, rejected %d, failed %d, %s, %d members%s",
		n, rate, h.Events["ingested"], h.Events["duplicate"], h.Events["rejected"], h.Events["failed"], lag, h.Members, outageNote(h.Outage))
}

// showStatus redraws the status line in place on a terminal (cut to its
// width: a wrapped line could not be redrawn), else prints it.
func showStatus(rep *reporter, s string) {
	if !rep.tty {
		fmt.Fprintln(rep.e.stderr, s)
		return
	}
	if f, ok := rep.e.stderr.(*os.File); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 1 {
			s = ansi.Truncate(s, w-1, "…")
		}
	}
	rep.line(s)
}

func outageNote(s string) string {
	if s == "" {
		return ""
	}
	return "; outage: " + safeLine(s)
}
