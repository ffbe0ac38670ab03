package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voiceapi/voiceapi/data"
)

// jobCollector reads the background jobs' queues from storage once per scrape, and the
// runs this process's runners ended (docs/jobs.md lists the series).
type jobCollector struct {
	jobs data.JobService
	log  *slog.Logger
}

// jobQueueTimeout bounds the scrape's read of the queues.
const jobQueueTimeout = 5 * time.Second

var (
	descJobQueueDepth = prometheus.NewDesc("voiceapi_job_queue_depth",
		"Jobs waiting to run (queued, due now or later), by kind.", []string{"kind"}, nil)
	descJobsRunning = prometheus.NewDesc("voiceapi_jobs_running",
		"Jobs running under a lease, in any process, by kind.", []string{"kind"}, nil)
	descJobOldestDue = prometheus.NewDesc("voiceapi_job_oldest_due_age_seconds",
		"How long the oldest due job of a kind has waited to be claimed (0 when none is due).", []string{"kind"}, nil)
	descJobRuns = prometheus.NewDesc("voiceapi_job_runs_total",
		"Runs of jobs this process ended, by kind and outcome (succeeded, retried, failed, lease_lost, stopped).", []string{"kind", "outcome"}, nil)
)

// Describe implements prometheus.Collector.
func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobQueueDepth, descJobsRunning, descJobOldestDue, descJobRuns} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A failed read of the queues leaves their series
// out of this scrape (a gap, not a false zero) and is logged.
func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), jobQueueTimeout)
	defer cancel()
	queues, err := c.jobs.JobQueues(ctx)
	if err != nil {
		c.log.Warn("reading the job queues for metrics", "error", err)
	}
	for _, q := range queues {
		ch <- prometheus.MustNewConstMetric(descJobQueueDepth, prometheus.GaugeValue, float64(q.Queued), q.Kind)
		ch <- prometheus.MustNewConstMetric(descJobsRunning, prometheus.GaugeValue, float64(q.Running), q.Kind)
		ch <- prometheus.MustNewConstMetric(descJobOldestDue, prometheus.GaugeValue, q.OldestDueAge.Seconds(), q.Kind)
	}
	for _, r := range c.jobs.JobRuns() {
		ch <- prometheus.MustNewConstMetric(descJobRuns, prometheus.CounterValue, float64(r.Count), r.Kind, r.Outcome)
	}
}
