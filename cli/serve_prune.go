package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// pruneBreather is the pause between two pruning transactions of one pass: the writes
// queued meanwhile commit first, so a large backlog never holds them up for long.
const pruneBreather = 20 * time.Millisecond

// pruneEvery is how often the server looks for delivery records past their retention:
// the retention itself when shorter than an hour, else hourly.
func pruneEvery(retention time.Duration) time.Duration { return min(retention, time.Hour) }

// pruneDeliveries deletes the finished delivery records older than retention now, then
// every pruneEvery(retention), until ctx is done; a retention of 0 keeps them all. Each
// pass is transactions of at most service.DeliveryPruneBatch deletions, a breather apart.
func pruneDeliveries(ctx context.Context, d *service.DeliveryService, logger *slog.Logger, retention time.Duration) {
	if retention <= 0 {
		return
	}
	pruneLoop(ctx, logger, pruneEvery(retention), "webhook delivery records", func(ctx context.Context) (int, error) { return d.PruneDeliveries(ctx, retention) }, service.DeliveryPruneBatch,
		"retention", retention.String())
}

// tokenPruneEvery is how often the server deletes tokens past their use: login tokens
// expire after --login-ttl (30 days by default), so an hour's delay keeps few.
const tokenPruneEvery = time.Hour

// pruneTokens deletes expired login tokens, and API keys past their grace after expiry
// (service.AuthService.PruneTokens), now and then every tokenPruneEvery until ctx is done.
func pruneTokens(ctx context.Context, auth *service.AuthService, logger *slog.Logger) {
	pruneLoop(ctx, logger, tokenPruneEvery, "expired tokens", auth.PruneTokens, service.TokenPruneBatch)
}

// pruneLoop runs a prunePass of prune now, then every interval until ctx is done, and
// logs what each pass deleted (what names the records; attrs follow the count) or why it
// stopped: the one loop of the server's pruning passes (delivery records, finished jobs,
// expired tokens).
func pruneLoop(ctx context.Context, logger *slog.Logger, every time.Duration, what string, prune func(context.Context) (int, error), batch int, attrs ...any) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		total, err := prunePass(ctx, prune, batch)
		switch {
		case err != nil && ctx.Err() == nil && !data.LoggedByStorage(err):
			logger.Error("pruning "+what, "error", err, "pruned", total)
		case total > 0:
			logger.Info("pruned "+what, append([]any{"count", total}, attrs...)...)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// prunePass calls prune, which deletes up to batch expired records in one transaction,
// a breather apart until it deletes fewer, and returns how many it deleted in all.
func prunePass(ctx context.Context, prune func(context.Context) (int, error), batch int) (int, error) {
	total := 0
	for {
		n, err := prune(ctx)
		total += n
		if err != nil || n < batch {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(pruneBreather):
		}
	}
}
