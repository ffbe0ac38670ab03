// Package webhook is the webhook dispatcher of conventions §14: at-least-once delivery
// from the durable outbox. The delivery queue (data.DeliveryQueue, implemented by the
// service layer over storage) turns outboxed events into pending delivery records; the
// dispatcher posts the due ones, signed (Standard Webhooks), with a bounded pool of
// workers through the SSRF-guarded client of netguard, and records each attempt with its
// retry time from the backoff schedule. Everything it works from is in the database, so
// after a restart or a crash it simply starts again from what is still pending.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
)

// DefaultRetrySchedule is the wait before each retry of a failed delivery: eleven attempts
// over about a day (the waits add up to 23h 42m 35s), then the delivery is failed. The
// early retries are quick, for a receiver that blinked; the late ones wait out an outage.
var DefaultRetrySchedule = []time.Duration{
	5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}

// Defaults of Config.
const (
	DefaultWorkers = 16
	DefaultTimeout = 10 * time.Second
	// maxIdleWait bounds a sleep between scans, so a wall-clock jump cannot strand a retry.
	maxIdleWait = time.Minute
	// errorWait is the pause after a storage error before trying again.
	errorWait = time.Second
	// maxResponseDrain is how much of a receiver's answer is read (and thrown away) so the
	// connection can be reused.
	maxResponseDrain = 64 << 10
)

// Config tunes the dispatcher.
type Config struct {
	// Workers is how many posts run at once; DefaultWorkers when 0.
	Workers int
	// Schedule is the wait before the 2nd, 3rd, … attempt; DefaultRetrySchedule when nil.
	// After len(Schedule)+1 failed attempts the delivery is failed for good.
	Schedule []time.Duration
	// Timeout bounds one post, answer included; DefaultTimeout when 0.
	Timeout time.Duration
	// AllowPrivate lifts the SSRF guard (--allow-private-urls); AllowURLPrefixes lift it
	// for URLs under them (--allow-url-prefix). serve sets both from its one
	// netguard.Guard.
	AllowPrivate     bool
	AllowURLPrefixes []string
	// Client overrides the outbound client (tests); netguard.NewClient when nil.
	Client *http.Client
	// Logger receives delivery failures; slog.Default when nil.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Lease is how long a claimed delivery stays away from other dispatchers (replicas
	// sharing the database) while this one posts it; three times Timeout when 0, so a
	// post always ends well within it. A dispatcher that dies mid-post leaves the
	// delivery due again once the lease ends.
	Lease time.Duration
}

// Dispatcher delivers webhooks. Start it once; Stop it before the database closes.
type Dispatcher struct {
	q      data.DeliveryQueue
	cfg    Config
	client *http.Client
	log    *slog.Logger

	wake chan struct{} // buffered 1: wake-ups coalesce

	mu       sync.Mutex
	inflight map[string]bool // delivery ids handed to a worker and not yet recorded
	// settled holds the ids recorded since the current claim began. On a store one
	// process owns, the claim reads a snapshot: one taken just before an attempt was
	// recorded still shows it pending after the id has left inflight, and without this
	// set the claim would post it again.
	settled map[string]bool

	cancel      context.CancelFunc // stops scheduling
	postCtx     context.Context    // parent of every post: cancelled only by a hard stop
	cancelPosts context.CancelFunc
	done        chan struct{}
	once        sync.Once
}

// NewDispatcher returns a dispatcher reading from q.
func NewDispatcher(q data.DeliveryQueue, cfg Config) *Dispatcher {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Schedule == nil {
		cfg.Schedule = DefaultRetrySchedule
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 3 * cfg.Timeout
	}
	client := cfg.Client
	if client == nil {
		// No redirects: a webhook answers where it was registered; following a 30x would
		// also turn the POST into a GET.
		// One idle connection per worker: every worker may post to one busy receiver.
		client = netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivate, AllowURLPrefixes: cfg.AllowURLPrefixes,
			Timeout: cfg.Timeout, MaxRedirects: -1, MaxIdleConnsPerHost: cfg.Workers})
	}
	postCtx, cancelPosts := context.WithCancel(context.Background())
	return &Dispatcher{
		q: q, cfg: cfg, client: client, log: cfg.Logger,
		wake: make(chan struct{}, 1), inflight: map[string]bool{}, settled: map[string]bool{},
		postCtx: postCtx, cancelPosts: cancelPosts, cancel: func() {}, done: make(chan struct{}),
	}
}

// Wake tells the dispatcher there may be new work (the database's event hook). It never
// blocks.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Start runs the dispatcher in the background until ctx ends or Stop is called. On start
// it drains the outbox and posts every pending delivery that is due: the recovery after a
// restart or a crash.
func (d *Dispatcher) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	go d.run(ctx)
}

// Stop stops taking work and waits for the posts in flight to finish and be recorded.
// When ctx ends first, the posts are cancelled and left pending, to be sent again on the
// next start. It returns ctx's error in that case.
func (d *Dispatcher) Stop(ctx context.Context) error {
	var err error
	d.once.Do(func() {
		d.cancel()
		select {
		case <-d.done:
		case <-ctx.Done():
			err = ctx.Err()
			d.cancelPosts()
			<-d.done
		}
		d.cancelPosts()
		d.client.CloseIdleConnections()
	})
	return err
}

func (d *Dispatcher) run(ctx context.Context) {
	jobs := make(chan *data.DeliveryJob)
	var wg sync.WaitGroup
	for range d.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				d.deliver(job)
			}
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
		close(d.done)
	}()
	timer := time.NewTimer(maxIdleWait)
	defer timer.Stop()
	for ctx.Err() == nil {
		wait := d.drainOutbox(ctx)
		d.beginClaim()
		list, next, err := d.q.ClaimDueDeliveries(ctx, d.cfg.Now(), d.cfg.Workers, d.cfg.Lease, d.isClaimed)
		if err != nil {
			if !data.LoggedByStorage(err) { // storage logged that once
				d.log.Error("webhook dispatcher: reading due deliveries", "error", err)
			}
			wait = errorWait // with an error the claim returns no jobs (it holds no lease)
		}
		for i, job := range list {
			d.setInFlight(job.DeliveryID)
			select {
			case jobs <- job:
			case <-ctx.Done():
				for _, j := range list[i:] {
					d.release(j.DeliveryID, false)
				}
				return
			}
		}
		if len(list) > 0 && wait == 0 {
			continue // more may be due at once
		}
		if wait == 0 {
			wait = maxIdleWait
			if !next.IsZero() {
				wait = min(max(next.Sub(d.cfg.Now()), 0), maxIdleWait)
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-timer.C:
		}
	}
}

// drainOutbox fans every outboxed event out into deliveries. It returns errorWait after a
// storage error, else 0.
func (d *Dispatcher) drainOutbox(ctx context.Context) time.Duration {
	for ctx.Err() == nil {
		n, err := d.q.FanOut(ctx, 0)
		if err != nil {
			if !data.LoggedByStorage(err) {
				d.log.Error("webhook dispatcher: fanning out events", "error", err)
			}
			return errorWait
		}
		if n == 0 {
			break
		}
	}
	return 0
}

// beginClaim forgets the ids settled before this claim: their records were committed
// before it began, so its snapshot shows them as they are now.
func (d *Dispatcher) beginClaim() {
	d.mu.Lock()
	clear(d.settled)
	d.mu.Unlock()
}

// isClaimed is the claim's skip: an id a worker holds, or one recorded while this claim
// ran (its snapshot may predate the record).
func (d *Dispatcher) isClaimed(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inflight[id] || d.settled[id]
}

func (d *Dispatcher) setInFlight(id string) {
	d.mu.Lock()
	d.inflight[id] = true
	d.mu.Unlock()
}

// release takes id out of the in-flight set; recorded says its attempt was written, so
// the claim running now must still skip it.
func (d *Dispatcher) release(id string, recorded bool) {
	d.mu.Lock()
	delete(d.inflight, id)
	if recorded {
		d.settled[id] = true
	}
	d.mu.Unlock()
}

// deliver posts one delivery and records the attempt. The record is written before the
// id leaves the in-flight set, and the claim running then skips it too, so the
// scheduler never sees it pending twice.
func (d *Dispatcher) deliver(job *data.DeliveryJob) {
	defer d.Wake() // a worker is free, and a retry may have been scheduled
	var out data.AttemptOutcome
	if job.Skip != "" {
		out = data.AttemptOutcome{Error: job.Skip}
	} else {
		out = d.post(job)
		if d.postCtx.Err() != nil && !out.Succeeded {
			// Cut short by a hard stop: it stays pending, due again when its lease ends.
			d.release(job.DeliveryID, false)
			return
		}
		if !out.Succeeded && job.Attempt-1 < len(d.cfg.Schedule) {
			out.RetryAt = d.cfg.Now().Add(d.cfg.Schedule[job.Attempt-1])
		}
	}
	err := d.q.FinishAttempt(context.Background(), job.DeliveryID, out)
	d.release(job.DeliveryID, true)
	if err != nil {
		d.log.Error("webhook dispatcher: recording an attempt", "delivery_id", job.DeliveryID, "error", err)
	}
	if !out.Succeeded {
		d.log.Warn("webhook delivery failed", "delivery_id", job.DeliveryID, "webhook_id", job.WebhookID,
			"event_id", job.EventID, "attempt", job.Attempt, "status", out.ResponseStatus, "error", out.Error,
			"retry", !out.RetryAt.IsZero())
	}
}

// post sends the signed envelope once.
func (d *Dispatcher) post(job *data.DeliveryJob) data.AttemptOutcome {
	ts := d.cfg.Now().Unix()
	sig, err := Sign(job.Secret, job.EventID, ts, job.Body)
	if err != nil {
		return data.AttemptOutcome{Error: "the webhook's secret cannot be used: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(d.postCtx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.URL, bytes.NewReader(job.Body))
	if err != nil {
		return data.AttemptOutcome{Error: "the webhook's URL cannot be used: " + err.Error()}
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "voiceapi-webhooks/1")
	h.Set("webhook-id", job.EventID)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	resp, err := d.client.Do(req)
	var out data.AttemptOutcome
	if resp != nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseDrain))
		resp.Body.Close()
		out.ResponseStatus = resp.StatusCode
	}
	switch {
	case err != nil:
		out.Error = d.describe(err)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		out.Succeeded = true
	default:
		out.Error = fmt.Sprintf("the receiver answered HTTP %d", resp.StatusCode)
	}
	return out
}

// describe turns a client error into a message for the delivery record: what went wrong,
// without the URL (which may carry a token in its query).
func (d *Dispatcher) describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, netguard.ErrForbiddenAddress):
		return "refused by the SSRF guard: the URL resolves to an internal address (see --allow-url-prefix and --allow-private-urls)"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", d.cfg.Timeout)
	case strings.Contains(err.Error(), "redirects"):
		return "the receiver answered with a redirect; redirects are not followed"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
