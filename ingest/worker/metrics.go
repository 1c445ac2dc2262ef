package worker

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"engram/backend/kafka"
	"engram/ingest"
)

// Metrics counts what the worker does, for GET /metrics (Prometheus) and
// GET /health (the source system's JSON status document).
type Metrics struct {
	reg    *prometheus.Registry
	events *prometheus.CounterVec
	stages *prometheus.HistogramVec
	lag    *prometheus.GaugeVec
	start  time.Time

	mu      sync.Mutex
	counts  map[string]int64
	lagSeen kafka.Lag
	lagErr  string
	outage  string
}

// NewMetrics registers the worker's metrics in a registry of its own.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "engram_worker_events_total", Help: "Messages finished, by outcome (ingested, duplicate, rejected, failed, canceled).",
		}, []string{"outcome"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "engram_worker_stage_seconds", Help: "Time each pipeline stage took per event.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10),
		}, []string{"stage"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "engram_worker_consumer_lag", Help: "Records of the raw topic not yet committed by the group, per partition.",
		}, []string{"topic", "partition"}),
		start:  time.Now(),
		counts: map[string]int64{},
	}
	m.reg.MustRegister(m.events, m.stages, m.lag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Observe counts a finished message and its stages' latencies.
func (m *Metrics) Observe(t *ingest.Trace) {
	outcome := t.Outcome.String()
	if t.Outcome == ingest.OutcomeCanceled {
		outcome = "canceled"
	}
	m.events.WithLabelValues(outcome).Inc()
	for _, r := range t.Stages {
		if r.Status == ingest.StatusDone || r.Status == ingest.StatusFailed {
			m.stages.WithLabelValues(r.Stage.String()).Observe(r.Duration.Seconds())
		}
	}
	m.mu.Lock()
	m.counts[outcome]++
	m.mu.Unlock()
}

// SetLag records the group's lag (err: it could not be read).
func (m *Metrics) SetLag(l kafka.Lag, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.lagErr = err.Error()
		return
	}
	m.lagSeen, m.lagErr = l, ""
	for topic, ps := range l.Partitions {
		for p, pl := range ps {
			m.lag.WithLabelValues(topic, strconv.Itoa(int(p))).Set(float64(pl.Lag))
		}
	}
}

// SetOutage says what stage is failing and being retried ("" when none).
func (m *Metrics) SetOutage(s string) {
	m.mu.Lock()
	m.outage = s
	m.mu.Unlock()
}

// Health is the /health document.
type Health struct {
	Status   string           `json:"status"` // ok, or degraded during an outage
	Service  string           `json:"service"`
	UptimeS  int64            `json:"uptimeSeconds"`
	Events   map[string]int64 `json:"events"`
	Lag      int64            `json:"lag"`
	Members  int              `json:"groupMembers"`
	Outage   string           `json:"outage,omitempty"`
	LagError string           `json:"lagError,omitempty"`
}

// Health is the worker's status now.
func (m *Metrics) Health() Health {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := Health{Status: "ok", Service: "engram-worker", UptimeS: int64(time.Since(m.start).Seconds()),
		Events: map[string]int64{}, Lag: m.lagSeen.Total, Members: m.lagSeen.Members, Outage: m.outage, LagError: m.lagErr}
	for k, v := range m.counts {
		h.Events[k] = v
	}
	if m.outage != "" {
		h.Status = "degraded"
	}
	return h
}

// Handler serves /health and /metrics.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m.Health())
	})
	return mux
}
