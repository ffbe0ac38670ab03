package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// fenceLog is the line a fenced replica logs, once, at error level.
const fenceLog = "the database was upgraded by a newer voiceapi"

// A running replica whose database a newer voiceapi migrates steps aside on its own (no
// /readyz call until it has): /readyz answers 503 saying why, a write is 503 with
// Retry-After and stores nothing, its job runner claims no job, reads are still served,
// and it says so once in its log. Before the newer migration, the same replica, having
// read the version itself, serves writes and runs jobs.
func TestOlderReplicaStepsAsideOnceANewerBinaryMigrated(t *testing.T) {
	r := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{})[0]
	var runs atomic.Int64
	r.Svc.Jobs.Register(service.JobKind{Name: "test.fence", Module: data.ModuleAgents,
		Handle: func(ctx context.Context, run *service.JobRun) error { runs.Add(1); return nil }})
	runner := r.Svc.Jobs.NewRunner(service.RunnerOptions{Poll: 50 * time.Millisecond, Kinds: []string{"test.fence"}})
	runner.Start(context.Background())
	t.Cleanup(func() { runner.Stop(context.Background()) })
	tok, ws := r.Owner.Token, r.Owner.WorkspaceID
	pool := r.PG.Pool()
	ctx := context.Background()

	// Without a newer migration nothing changes, however often the version is read.
	before := postgres.FenceChecks(r.PG)
	waitUntil(t, 10*time.Second, "the replica to read the schema version twice on its own", func() bool {
		return postgres.FenceChecks(r.PG) >= before+2
	})
	if resp := r.Do("GET", "/readyz", "", nil); resp.Status != 200 {
		t.Fatalf("/readyz before the newer migration: %d %s", resp.Status, resp.Body)
	}
	if resp := r.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "Before"}); resp.Status != 201 {
		t.Fatalf("a write before the newer migration: %d %s", resp.Status, resp.Body)
	}
	if err := r.Store.Update(ctx, func(tx service.Tx) error {
		_, err := r.Svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ws, Kind: "test.fence"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the job queued before the newer migration to run", func() bool { return runs.Load() == 1 })
	if postgres.Fenced(r.PG) {
		t.Fatal("fenced with no newer migration")
	}

	// A newer voiceapi migrates: one version past this binary's.
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_a_newer_voiceapi')`, postgres.LatestVersion(all)+1); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the replica to notice the newer migration on its own", func() bool { return postgres.Fenced(r.PG) })

	resp := r.Do("GET", "/readyz", "", nil)
	checkSuperseded(t, "/readyz", resp)
	resp = r.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "After"})
	checkSuperseded(t, "POST /api/v1/agents", resp)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("the refused write has no Retry-After")
	}
	var agents int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM agents WHERE workspace_id = $1`, ws).Scan(&agents); err != nil || agents != 1 {
		t.Errorf("agents stored: %d (%v), want 1: the refused write stored something", agents, err)
	}
	// Reads are served (docs/upgrading.md says why).
	list := r.Do("GET", "/api/v1/agents", tok, nil)
	if list.Status != 200 || !strings.Contains(string(list.Body), `"Before"`) {
		t.Errorf("a read on the fenced replica: %d %s", list.Status, list.Body)
	}

	// A job a newer replica queues is not this one's to run.
	id := r.PG.IDs().New(data.PrefixJob)
	if _, err := pool.Exec(ctx, `INSERT INTO jobs (id, workspace_id, kind, payload, status, attempt, max_attempts, run_at, due_at, created_at)
		VALUES ($1, $2, 'test.fence', '\x7b7d', 'queued', 0, 3, now() - interval '1 second', now() - interval '1 second', now())`, id, ws); err != nil {
		t.Fatal(err)
	}
	runner.Wake()
	time.Sleep(time.Second) // twenty polls of the started runner, when the machine allows
	// A claim made now, whatever the started runner's loop did meanwhile: refused.
	if ran, err := r.Svc.Jobs.NewRunner(service.RunnerOptions{Kinds: []string{"test.fence"}}).RunDue(ctx); ran != 0 || !errors.Is(err, data.ErrStorageSuperseded) {
		t.Errorf("a claim on the fenced replica: ran %d, %v; want none, refused", ran, err)
	}
	var status, owner string
	if err := pool.QueryRow(ctx, `SELECT status, lease_owner FROM jobs WHERE id = $1`, id).Scan(&status, &owner); err != nil {
		t.Fatal(err)
	}
	if status != "queued" || owner != "" || runs.Load() != 1 {
		t.Errorf("the job queued after the newer migration: status %s, lease owner %q, runs %d; want queued, unclaimed, 1 run (the first job's)", status, owner, runs.Load())
	}

	// The passes a server runs in the background (cli/serve.go) claim and write nothing.
	// (The idle conversations' end and the retention sweep read first and find nothing
	// to do here; their writes go through the same Update.)
	passes := map[string]func() error{
		"webhook claim": func() error {
			_, _, err := r.Svc.Deliveries.ClaimDueDeliveries(ctx, time.Now(), 4, time.Minute, func(string) bool { return false })
			return err
		},
		"webhook fan-out":   func() error { _, err := r.Svc.Deliveries.FanOut(ctx, 0); return err },
		"token pruning":     func() error { _, err := r.Svc.Auth.PruneTokens(ctx); return err },
		"idempotency purge": func() error { _, err := r.Svc.Idempotency.PurgeIdempotency(ctx); return err },
		"delivery pruning":  func() error { _, err := r.Svc.Deliveries.PruneDeliveries(ctx, time.Hour); return err },
		"job pruning":       func() error { _, err := r.Svc.Jobs.PruneJobs(ctx, time.Hour); return err },
	}
	for name, pass := range passes {
		if err := pass(); !errors.Is(err, data.ErrStorageSuperseded) {
			t.Errorf("%s on the fenced replica: %v, want it refused", name, err)
		}
	}

	// The retention sweep's check of deleted campaigns finds one listed (left by a
	// campaign deleted before the fence) and is refused its write: no line of its own.
	if _, err := pool.Exec(ctx, `INSERT INTO campaigns_deleting (campaign_id, workspace_id) VALUES ($1, $2)`,
		r.PG.IDs().New(data.PrefixCampaign), ws); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Svc.Retention.Sweep(ctx); err != nil && !errors.Is(err, data.ErrStorageSuperseded) {
		t.Errorf("retention sweep on the fenced replica: %v", err)
	}

	// A wrong password is still refused (422); its record, a write, is not, and is not
	// logged again either.
	if resp := r.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": "owner@example.com", "password": "not-the-password"}); resp.Status != 422 {
		t.Errorf("a wrong password on the fenced replica: %d %s, want 422", resp.Status, resp.Body)
	}

	logs := r.Logs.String()
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) && !strings.Contains(line, fenceLog) {
			t.Errorf("a background pass logs the fence again: %s", line)
		}
	}
	if n := strings.Count(logs, fenceLog); n != 1 {
		t.Errorf("the fence is logged %d times, want once:\n%s", n, logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, fenceLog) && !strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the fence is logged below error level: %s", line)
		}
	}
	if strings.Contains(logs, "request refused by the system below storage") || strings.Contains(logs, `"msg":"not ready"`) {
		t.Errorf("refused requests are logged one by one:\n%s", logs)
	}
}

// checkSuperseded checks a fenced replica's answer: 503 service_unavailable in the error
// shape, saying the database was upgraded and the replica must be replaced.
func checkSuperseded(t *testing.T, what string, resp *testkit.Response) {
	t.Helper()
	body := resp.JSON()
	msg, _ := body["message"].(string)
	if resp.Status != 503 || body["code"] != data.EUNAVAILABLE || !strings.Contains(msg, "upgraded by a newer voiceapi") || !strings.Contains(msg, "replace this replica") {
		t.Errorf("%s on the fenced replica: %d %s, want 503 service_unavailable saying the database was upgraded", what, resp.Status, resp.Body)
	}
	if _, ok := body["errors"]; ok {
		t.Errorf("%s: a 503 carries errors: %s", what, resp.Body)
	}
}

// A fenced replica writes no rate count (its counting is a write: fence.go) yet still
// limits the reads it serves, by its own counts in memory, quietly: the limit's headers
// count down, the request past it is 429, and no request logs a failed count.
func TestAFencedReplicaLimitsItsReadsByItsOwnCounts(t *testing.T) {
	const limit = 3
	r := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{Configure: func(c *server.Config) { c.RateLimit = limit }})[0]
	ctx := context.Background()
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.PG.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_a_newer_voiceapi')`, postgres.LatestVersion(all)+1); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the replica to notice the newer migration", func() bool { return postgres.Fenced(r.PG) })
	var windows int
	if err := r.PG.Pool().QueryRow(ctx, `SELECT count(*) FROM rate_windows`).Scan(&windows); err != nil {
		t.Fatal(err)
	}
	checkReadsLimited(t, r, limit, "on the fenced replica")
	var after int
	if err := r.PG.Pool().QueryRow(ctx, `SELECT count(*) FROM rate_windows`).Scan(&after); err != nil || after != windows {
		t.Errorf("rate windows: %d before the reads, %d after (%v): the fenced replica counted in the database", windows, after, err)
	}
	if logs := r.Logs.String(); strings.Contains(logs, "rate limit") {
		t.Errorf("the fenced replica logs its rate counts:\n%s", logs)
	}
}

// While a migration holds the fence's lock, a replica's reads neither wait for it nor go
// unlimited: their rate counts, which would have to wait, are kept by the replica in
// memory, quietly, and the shared count goes on once the migration is over.
func TestReadsDuringAMigrationAreLimitedByTheReplicasOwnCounts(t *testing.T) {
	const limit = 3
	r := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{Configure: func(c *server.Config) { c.RateLimit = limit }})[0]
	ctx := context.Background()
	migration, err := r.PG.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer migration.Release()
	if _, err := migration.Exec(ctx, `SELECT pg_advisory_lock($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	checkReadsLimited(t, r, limit, "during the migration")
	if logs := r.Logs.String(); strings.Contains(logs, "rate limit") {
		t.Errorf("reads during the migration log their rate counts:\n%s", logs)
	}
	if _, err := migration.Exec(ctx, `SELECT pg_advisory_unlock($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	var windows int
	if resp := r.Do("GET", "/api/v1/agents", r.Owner.Token, nil); resp.Status != 200 {
		t.Errorf("a read after the migration: %d %s", resp.Status, resp.Body)
	}
	if err := r.PG.Pool().QueryRow(ctx, `SELECT count(*) FROM rate_windows`).Scan(&windows); err != nil || windows == 0 {
		t.Errorf("rate windows after the migration: %d (%v), want the read counted in the database", windows, err)
	}
}

// checkReadsLimited reads limit+1 times on r: each within the limit is answered 200 with
// the remaining count it leaves, the one past it 429. when says when the reads are made.
func checkReadsLimited(t *testing.T, r *testkit.Replica, limit int, when string) {
	t.Helper()
	for i := range limit + 1 {
		resp := r.Do("GET", "/api/v1/agents", r.Owner.Token, nil)
		switch {
		case i < limit && (resp.Status != 200 || resp.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(limit-1-i)):
			t.Errorf("read %d %s: %d, remaining %q, want 200 and %d", i+1, when, resp.Status, resp.Header.Get("X-RateLimit-Remaining"), limit-1-i)
		case i == limit && resp.Status != 429:
			t.Errorf("read %d %s: %d %s, want 429 past the limit", i+1, when, resp.Status, resp.Body)
		}
	}
}
