package cli

import (
	"context"
	"fmt"

	"engram/backend/telemetry"
	"engram/ingest"
	"engram/model"
	"engram/ui"
)

// openTelemetry sets up span export as the otel.* settings say: nil (and
// no cost) when they name no endpoint. stop flushes what is queued within
// telemetry.FlushTimeout, Ctrl-C or not, and prints one line if spans were
// lost; it must run after the last pipeline has ended.
func openTelemetry(ctx context.Context, conf *resolved, e *env) (tel *telemetry.Telemetry, stop func() error, err error) {
	tel, err = telemetry.New(ctx, telemetryConfig(conf))
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %s", conf.redact(err.Error()))
	}
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetry.FlushTimeout)
		defer cancel()
		if st := tel.Shutdown(ctx); st.Lost() > 0 {
			why := "the flush at exit ran out of time or the queue was full"
			if st.FirstErr != nil {
				why = st.FirstErr.Error()
			}
			fmt.Fprintf(e.stderr, "engram: tracing: %d of %d spans not exported to %s (ingestion was not affected): %s\n",
				st.Lost(), st.Spans, safeLine(tel.URL()), safeLine(conf.redact(why)))
		}
		return nil
	}
	return tel, stop, nil
}

func telemetryConfig(conf *resolved) telemetry.Config {
	return telemetry.Config{
		Endpoint: conf.OTel.Endpoint, TracesEndpoint: conf.OTel.TracesEndpoint,
		Protocol: conf.OTel.Protocol, Headers: conf.OTel.Headers,
		ServiceName: conf.OTel.ServiceName, ResourceAttributes: conf.OTel.ResourceAttributes,
		Sampler: conf.OTel.TracesSampler, SamplerArg: conf.OTel.TracesSamplerArg,
		Disabled: conf.OTel.SDKDisabled, StageSpans: conf.OTel.StageSpans,
		ArchiveBackend: orDefault(conf.Archive, "dir"), IndexBackend: orDefault(conf.Index, "sqlite"),
		Redact: conf.redact,
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// observe adds span export to next, when tracing is on.
func (b *backends) observe(next ingest.Observer) ingest.Observer { return b.tel.Observe(next) }

// tracedRecorder is the inspector's recorder with span export: the
// inspector hands each run its own observer, which this wraps.
type tracedRecorder struct {
	ui.PipelineRecorder
	tel *telemetry.Telemetry
}

func (r tracedRecorder) Record(ctx context.Context, ev *model.Event, obs ingest.Observer) (*ingest.Trace, error) {
	return r.PipelineRecorder.Record(ctx, ev, r.tel.Observe(obs))
}

func (r tracedRecorder) Ingest(ctx context.Context, items <-chan ingest.Item, obs ingest.Observer) ingest.Summary {
	return r.PipelineRecorder.Ingest(ctx, items, r.tel.Observe(obs))
}

// reindex is ingest.Reindex (or, given keys, ingest.ReindexKeys of
// them), traced when tracing is on: one trace per run, a span per batch
// (backend/telemetry/reindex.go says why).
func (b *backends) reindex(ctx context.Context, cfg ingest.ReindexConfig, keys []string) (ingest.ReindexSummary, error) {
	rt := b.tel.StartReindex(cfg.From, cfg.To, cfg.Index.Name())
	if rt != nil {
		cfg.OnBatch = rt.Batch
	}
	var (
		sum ingest.ReindexSummary
		err error
	)
	if keys != nil {
		sum, err = ingest.ReindexKeys(ctx, cfg, keys)
	} else {
		sum, err = ingest.Reindex(ctx, cfg)
	}
	rt.End(sum, err)
	return sum, err
}
