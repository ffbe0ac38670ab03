package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/voiceapi/voiceapi/service"
)

// jobOptions are serve's flags of the background job runner (docs/jobs.md).
type jobOptions struct {
	workers   int
	lease     time.Duration
	poll      time.Duration
	retention time.Duration
	// testConcurrency bounds the agent test cases this process runs at once.
	testConcurrency int
}

// register declares the job flags on f.
func (o *jobOptions) register(f *pflag.FlagSet) {
	f.IntVar(&o.workers, "job-workers", service.DefaultJobWorkers, "background jobs (url fetches, test runs, analyses...) this process runs at once")
	f.DurationVar(&o.lease, "job-lease", service.DefaultJobLease, "how long a job stays with the process running it without a heartbeat: how soon a job whose process died runs again")
	f.DurationVar(&o.poll, "job-poll", service.DefaultJobPoll, "longest wait before this process looks for jobs other replicas queued (its own wake it at once)")
	f.DurationVar(&o.retention, "job-retention", service.DefaultJobRetention, "how long finished jobs are kept before a background pass deletes them (0 keeps them forever)")
	f.IntVar(&o.testConcurrency, "test-concurrency", service.DefaultTestConcurrency, "agent test cases (each a conversation with a model provider) this process runs at once, across its test runs")
}

// check refuses job flags the runner cannot honour.
func (o *jobOptions) check() error {
	switch {
	case o.workers < 1:
		return fmt.Errorf("--job-workers must be at least 1")
	case o.lease < time.Second:
		return fmt.Errorf("--job-lease must be at least 1s (a heartbeat runs every third of it)")
	case o.poll <= 0:
		return fmt.Errorf("--job-poll must be more than 0")
	case o.retention < 0:
		return fmt.Errorf("--job-retention must be 0 (keep forever) or more")
	case o.testConcurrency < 1:
		return fmt.Errorf("--test-concurrency must be at least 1")
	}
	return nil
}

// startJobs starts the job runner on svc and the pruning of finished jobs; stop stops
// claiming, waits up to drain for the running jobs (those cut short are queued again for
// the next start or another replica), and ends the pruning. Call stop before the
// database closes.
func startJobs(svc *service.Services, o jobOptions, logger *slog.Logger) (stop func(drain time.Duration)) {
	svc.TestRuns.Configure(service.TestRunOptions{Concurrency: o.testConcurrency})
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: o.workers, Lease: o.lease, Poll: o.poll})
	runner.Start(context.Background())
	logger.Info("job runner started", "owner", runner.Owner(), "workers", o.workers)
	pruneCtx, stopPrune := context.WithCancel(context.Background())
	pruned := make(chan struct{})
	go func() { defer close(pruned); pruneJobs(pruneCtx, svc.Jobs, logger, o.retention) }()
	return func(drain time.Duration) {
		stopPrune()
		<-pruned
		ctx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		if err := runner.Stop(ctx); err != nil {
			logger.Warn("job runner stopped before its jobs ended; they are queued again", "error", err)
		}
	}
}

// pruneJobs deletes the jobs that finished more than retention ago now, then every
// pruneEvery(retention), until ctx is done; a retention of 0 keeps them all.
func pruneJobs(ctx context.Context, jobs *service.JobService, logger *slog.Logger, retention time.Duration) {
	if retention <= 0 {
		return
	}
	pruneLoop(ctx, logger, pruneEvery(retention), "finished jobs", func(ctx context.Context) (int, error) { return jobs.PruneJobs(ctx, retention) }, service.JobPruneBatch,
		"retention", retention.String())
}
