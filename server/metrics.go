package server

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/voiceapi/voiceapi/data"
)

// DBStats are the storage figures GET /metrics reports, read at each scrape.
type DBStats struct {
	SizeBytes          int64 // size of the database file
	OpenReadTx         int   // read transactions open now
	ReadTxTotal        int   // read transactions started since open
	FreePages          int   // pages on the freelist
	PendingPages       int   // pages freed by transactions still visible to readers
	FreelistInuseBytes int   // bytes the freelist itself takes
	PageAllocBytes     int64 // bytes allocated for pages by write transactions
	Writes             int64 // page writes to disk
	WriteTime          time.Duration
	Spills             int64 // nodes spilled on commit
	SpillTime          time.Duration
	Splits             int64
	Rebalances         int64
}

// metrics is the server's Prometheus registry. Each Server has its own, never the global
// one, so that tests can build many servers in one process.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// queueDepth reports the webhook outbox's backlog; set by the dispatcher.
	queueDepth atomic.Pointer[func() int]
}

func (s *Server) metricsRoutes() []route {
	// Instance admins only on the API listener: metrics name routes, sizes and rates that
	// are nobody else's business, and a token is the one credential every caller already
	// has. Prometheus sends it with `authorization: {credentials_file: ...}`. A scraper
	// without a token uses --metrics-addr, a listener the operator keeps private.
	return []route{{Method: "GET", Path: "/metrics", Need: data.Admin, handle: s.handleMetrics}}
}

// newMetrics registers voiceapi's collectors on a private registry.
func newMetrics(cfg Config) *metrics {
	m := &metrics{registry: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "voiceapi_http_requests_total",
		Help: "HTTP requests by method, route template and status.",
	}, []string{"method", "route", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "voiceapi_http_request_duration_seconds",
		Help:    "Time to serve an HTTP request, by method and route template.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method", "route"})
	queueDepth := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "voiceapi_webhook_queue_depth",
		Help: "Webhook deliveries waiting to be sent (0 until a dispatcher reports it).",
	}, func() float64 {
		if fn := m.queueDepth.Load(); fn != nil {
			return float64((*fn)())
		}
		return 0
	})
	if cfg.QueueDepth != nil {
		m.queueDepth.Store(&cfg.QueueDepth)
	}
	m.registry.MustRegister(
		m.requests, m.latency, queueDepth,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if cfg.DBStats != nil {
		m.registry.MustRegister(&dbCollector{stats: cfg.DBStats})
	}
	return m
}

// knownMethods bounds the method label: a client may send any token as a method, and
// each distinct label value would be a new series held forever.
var knownMethods = map[string]bool{
	"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true,
}

// observe records one finished request; route is the template (or "unmatched"), so the
// number of series stays that of the route table.
func (m *metrics) observe(method, route string, status int, d time.Duration) {
	if !knownMethods[method] {
		method = "OTHER"
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(method, route).Observe(d.Seconds())
}

// SetQueueDepth registers the function that reports the webhook queue depth, for a
// dispatcher started after the server was built. It is safe to call while serving.
func (s *Server) SetQueueDepth(fn func() int) {
	if fn == nil {
		s.prom.queueDepth.Store(nil)
		return
	}
	s.prom.queueDepth.Store(&fn)
}

// MetricsHandler serves the Prometheus text exposition with no authentication, for the
// private --metrics-addr listener.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.prom.registry, promhttp.HandlerOpts{ErrorLog: promLogger{s}})
}

// handleMetrics: GET /metrics — the Prometheus exposition, for instance admins.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	s.MetricsHandler().ServeHTTP(w, r)
	return nil
}

// promLogger sends promhttp's collection errors to the server's log.
type promLogger struct{ s *Server }

func (l promLogger) Println(v ...any) { l.s.log.Error("collecting metrics", "error", v) }

// dbCollector reads the database's statistics once per scrape.
type dbCollector struct{ stats func() DBStats }

var (
	descDBSize       = prometheus.NewDesc("voiceapi_db_size_bytes", "Size of the database file in bytes.", nil, nil)
	descOpenReadTx   = prometheus.NewDesc("voiceapi_db_open_read_transactions", "Read transactions open now.", nil, nil)
	descReadTxTotal  = prometheus.NewDesc("voiceapi_db_read_transactions_total", "Read transactions started since the database was opened.", nil, nil)
	descFreePages    = prometheus.NewDesc("voiceapi_db_free_pages", "Pages on the freelist.", nil, nil)
	descPendingPages = prometheus.NewDesc("voiceapi_db_pending_pages", "Pages freed but still visible to open readers.", nil, nil)
	descFreelistUse  = prometheus.NewDesc("voiceapi_db_freelist_inuse_bytes", "Bytes the freelist takes.", nil, nil)
	descPageAlloc    = prometheus.NewDesc("voiceapi_db_page_alloc_bytes_total", "Bytes allocated for pages by write transactions.", nil, nil)
	descWrites       = prometheus.NewDesc("voiceapi_db_writes_total", "Page writes to disk.", nil, nil)
	descWriteTime    = prometheus.NewDesc("voiceapi_db_write_seconds_total", "Time spent writing pages to disk.", nil, nil)
	descSpills       = prometheus.NewDesc("voiceapi_db_spills_total", "Nodes spilled on commit.", nil, nil)
	descSpillTime    = prometheus.NewDesc("voiceapi_db_spill_seconds_total", "Time spent spilling nodes.", nil, nil)
	descSplits       = prometheus.NewDesc("voiceapi_db_splits_total", "Nodes split on commit.", nil, nil)
	descRebalances   = prometheus.NewDesc("voiceapi_db_rebalances_total", "Node rebalances on commit.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDBSize, descOpenReadTx, descReadTxTotal, descFreePages, descPendingPages,
		descFreelistUse, descPageAlloc, descWrites, descWriteTime, descSpills, descSpillTime, descSplits, descRebalances} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(descDBSize, float64(st.SizeBytes))
	gauge(descOpenReadTx, float64(st.OpenReadTx))
	counter(descReadTxTotal, float64(st.ReadTxTotal))
	gauge(descFreePages, float64(st.FreePages))
	gauge(descPendingPages, float64(st.PendingPages))
	gauge(descFreelistUse, float64(st.FreelistInuseBytes))
	counter(descPageAlloc, float64(st.PageAllocBytes))
	counter(descWrites, float64(st.Writes))
	counter(descWriteTime, st.WriteTime.Seconds())
	counter(descSpills, float64(st.Spills))
	counter(descSpillTime, st.SpillTime.Seconds())
	counter(descSplits, float64(st.Splits))
	counter(descRebalances, float64(st.Rebalances))
}
