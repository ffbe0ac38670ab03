package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// newerMigration is a newer voiceapi's migration that marks what older code writes after
// it committed: agents stored before it have written_after_newer NULL (the column comes
// with no default), agents stored after it true (the default set next), which no older
// binary knows to leave out. The pause keeps it running while writes arrive.
func newerMigration(t *testing.T) postgres.Migration {
	t.Helper()
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	return postgres.Migration{Version: postgres.LatestVersion(all) + 1, Name: "from_a_newer_voiceapi", SQL: `
		ALTER TABLE agents ADD COLUMN written_after_newer boolean;
		ALTER TABLE agents ALTER COLUMN written_after_newer SET DEFAULT true;
		SELECT pg_sleep(0.2);`}
}

// A newer voiceapi migrates the database while an older replica serves writes through
// real HTTP: no write the older replica answers 201 committed after the migration (none
// stored an agent the migration's default marks), every write that began once the
// migration had returned is 503 with the fence's message and stores nothing, and each
// 201 stored its agent. Before the fence's lock and read with BEGIN, the replica went on
// writing by its old code until its next reading of the version, up to 1.75 s later.
func TestNoWriteRunsTheOldCodeOnceANewerBinaryMigrated(t *testing.T) {
	r := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{})[0]
	tok, ws := r.Owner.Token, r.Owner.WorkspaceID
	pool := r.PG.Pool()
	ctx := context.Background()

	type outcome struct {
		name    string
		started time.Time
		resp    *testkit.Response
	}
	const workers, afterEach = 4, 5
	var (
		mu       sync.Mutex
		outcomes []outcome
		done     atomic.Int64 // writes answered
		migrated atomic.Int64 // when Migrate returned (UnixNano), 0 before
		wg       sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, after := 0, 0; after < afterEach; i++ {
				name := fmt.Sprintf("w%d-%d", w, i)
				started := time.Now()
				resp := r.Do("POST", "/api/v1/agents", tok, agentBody(name))
				mu.Lock()
				outcomes = append(outcomes, outcome{name, started, resp})
				mu.Unlock()
				done.Add(1)
				if m := migrated.Load(); m != 0 && started.UnixNano() > m {
					after++
				}
				if i > 10000 {
					return // the test fails below: the migration never returned
				}
			}
		}()
	}
	waitUntil(t, 30*time.Second, "the writes to be under way", func() bool { return done.Load() >= 3*workers })

	newer := newerMigration(t)
	postgres.AsNewerBinary(t, newer)
	applied, err := postgres.Migrate(ctx, pool)
	migrated.Store(time.Now().UnixNano())
	if err != nil || !slices.Equal(applied, []int{newer.Version}) {
		t.Fatalf("the newer binary's migration: applied %v, %v", applied, err)
	}
	wg.Wait()

	stored := map[string]*bool{}
	rows, err := pool.Query(ctx, `SELECT name, written_after_newer FROM agents WHERE workspace_id = $1`, ws)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var after *bool
		if err := rows.Scan(&name, &after); err != nil {
			t.Fatal(err)
		}
		stored[name] = after
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var created, refused, refusedAfter int
	for _, o := range outcomes {
		after, ok := stored[o.name]
		switch o.resp.Status {
		case 201:
			created++
			if o.started.UnixNano() > migrated.Load() {
				t.Errorf("%s began after the newer migration had returned and was answered 201", o.name)
			}
			if !ok {
				t.Errorf("%s was answered 201 and stored nothing", o.name)
			} else if after != nil {
				t.Errorf("%s was answered 201 and committed after the newer migration: the older replica wrote by its old code", o.name)
			}
		case 503:
			refused++
			if o.started.UnixNano() > migrated.Load() {
				refusedAfter++
			}
			checkSuperseded(t, "POST /api/v1/agents ("+o.name+")", o.resp)
			if o.resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s: the refused write has no Retry-After", o.name)
			}
			if ok {
				t.Errorf("%s was refused and stored its agent", o.name)
			}
		default:
			t.Errorf("%s: %d %s", o.name, o.resp.Status, o.resp.Body)
		}
	}
	if created == 0 || refusedAfter < workers*afterEach {
		t.Errorf("%d writes answered 201, %d refused (%d begun after the migration), want some 201 and every write begun after refused", created, refused, refusedAfter)
	}
	if len(stored) != created {
		t.Errorf("%d agents stored, %d writes answered 201", len(stored), created)
	}
	t.Logf("%d writes: %d stored before the migration, %d refused (%d begun after it returned)", len(outcomes), created, refused, refusedAfter)
}

// Each write path the fence guards (Update, the job claim, a knowledge file's store and
// discard, API keys' last_used_at, the shared rate counts and their clean-up, the rows a
// start writes after its migration) refuses at once a write that begins after a newer binary's migration has
// committed, on an engine that has not read the version since: each is tried on an engine
// of its own whose own readings are stopped, so that none learns it from another path's
// refusal or its own loop. Nothing is written: the
// queued job stays queued and unclaimed, the file stored before stays, no file is added,
// last_used_at stays, no rate window is counted or cleared, the start's meta rows stay
// absent and its sweep leaves the orphan file. (last_used_at's flush drops a fenced replica's uses
// without an error: they are informational, and the fence is logged once.)
func TestEveryWritePathMeetsANewerMigrationAtOnce(t *testing.T) {
	rs := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{})
	ws := rs[0].Owner.WorkspaceID
	pool := rs[0].PG.Pool()
	ctx := context.Background()
	ids := rs[0].PG.IDs()
	kb, kept, added := ids.New(data.PrefixKnowledgeBase), ids.New(data.PrefixSource), ids.New(data.PrefixSource)
	if err := rs[0].PG.PutSourceFile(ctx, ws, kb, kept, strings.NewReader("kept")); err != nil {
		t.Fatal(err)
	}
	job := ids.New(data.PrefixJob)
	if _, err := pool.Exec(ctx, `INSERT INTO jobs (id, workspace_id, kind, payload, status, attempt, max_attempts, run_at, due_at, created_at)
		VALUES ($1, $2, 'test.fence', '\x7b7d', 'queued', 0, 3, now() - interval '1 second', now() - interval '1 second', now())`, job, ws); err != nil {
		t.Fatal(err)
	}

	var keyID int64
	var keyUsed *time.Time
	if err := pool.QueryRow(ctx, `SELECT id, last_used_at FROM api_keys ORDER BY id LIMIT 1`).Scan(&keyID, &keyUsed); err != nil {
		t.Fatal(err)
	}
	// One older engine a path, with nothing of its own reading the version (no job runner,
	// no dispatcher, its watch stopped): what refuses a path's write is the path's own
	// reading, not a reading made meanwhile.
	var dbs []*postgres.DB
	for range 8 {
		db := testkit.OpenPostgres(t, func(o *postgres.Options) { o.URL = rs[0].PG.Options().URL })
		postgres.StopWatching(db)
		dbs = append(dbs, db)
	}

	// What a start writes once migrated: the meta rows (made absent, so that a start
	// would write them) and the sweep of a file no source holds, past its grace.
	orphanKB, orphan := ids.New(data.PrefixKnowledgeBase), ids.New(data.PrefixSource)
	if _, err := pool.Exec(ctx, `INSERT INTO source_files (workspace_id, knowledge_base_id, source_id, content, stored_at)
		VALUES ($1, $2, $3, 'orphan', now() - interval '2 hours')`, ws, orphanKB, orphan); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM meta WHERE name IN ('cursor_key', 'secret_key_check')`); err != nil {
		t.Fatal(err)
	}
	oldWindow := time.Now().Add(-time.Hour).Truncate(time.Minute)
	if _, err := pool.Exec(ctx, `INSERT INTO rate_windows (key, window_start, count, prev) VALUES ('told', $1, 1, 0)`, oldWindow); err != nil {
		t.Fatal(err)
	}

	newer := newerMigration(t)
	postgres.AsNewerBinary(t, newer)
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	paths := []struct {
		name  string
		write func(db *postgres.DB) error
		quiet bool // refused without an error
	}{
		{"Update", func(db *postgres.DB) error {
			return db.Update(ctx, func(tx service.Tx) error { _, err := tx.Workspace(ws); return err })
		}, false},
		{"ClaimJobs", func(db *postgres.DB) error {
			_, _, err := db.ClaimJobs(ctx, data.JobClaim{Kinds: []string{"test.fence"}, Owner: "older", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 1})
			return err
		}, false},
		{"PutSourceFile", func(db *postgres.DB) error {
			return db.PutSourceFile(ctx, ws, kb, added, strings.NewReader("added"))
		}, false},
		{"DiscardSourceFiles", func(db *postgres.DB) error {
			return db.DiscardSourceFiles(ctx, ws, kb, []string{kept})
		}, false},
		{"last_used_at", func(db *postgres.DB) error {
			db.MarkAPIKeyUsed(keyID, now.Add(time.Hour))
			postgres.FlushKeyUses(db)
			return nil
		}, true},
		{"CountRequest", func(db *postgres.DB) error {
			_, _, err := db.CountRequest(ctx, "tfence", now.Truncate(time.Minute), 10)
			return err
		}, false},
		{"the start's rows", func(db *postgres.DB) error { return postgres.StartRows(ctx, db) }, false},
		{"the rate windows' clean-up", func(db *postgres.DB) error {
			return postgres.ClearRateWindows(ctx, db, oldWindow.Add(time.Minute))
		}, false},
	}
	for i, p := range paths {
		db := dbs[i]
		checks := postgres.FenceChecks(db)
		err := p.write(db)
		if p.quiet && err == nil && postgres.Fenced(db) {
			continue
		}
		if !errors.Is(err, data.ErrStorageSuperseded) {
			t.Errorf("%s after the newer migration: %v, want it refused", p.name, err)
		} else if !postgres.Fenced(db) {
			t.Errorf("%s was refused and left its replica unfenced", p.name)
		}
		if postgres.FenceChecks(db) != checks {
			t.Errorf("%s: the engine read the version on its own meanwhile: its refusal proves nothing of the path", p.name)
		}
	}
	var status, owner string
	if err := pool.QueryRow(ctx, `SELECT status, lease_owner FROM jobs WHERE id = $1`, job).Scan(&status, &owner); err != nil || status != "queued" || owner != "" {
		t.Errorf("the queued job: %s, leased to %q (%v), want queued and unclaimed", status, owner, err)
	}
	var files []string
	rows, err := pool.Query(ctx, `SELECT source_id FROM source_files WHERE knowledge_base_id = $1`, kb)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		files = append(files, id)
	}
	if !slices.Equal(files, []string{kept}) {
		t.Errorf("files stored: %v, want only %s, stored before the migration", files, kept)
	}
	var used *time.Time
	if err := pool.QueryRow(ctx, `SELECT last_used_at FROM api_keys WHERE id = $1`, keyID).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if (used == nil) != (keyUsed == nil) || used != nil && !used.Equal(*keyUsed) {
		t.Errorf("last_used_at: %v, want %v as before the migration", used, keyUsed)
	}
	var windows, metaRows, orphans int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM rate_windows WHERE key = 'tfence') + 1 - (SELECT count(*) FROM rate_windows WHERE key = 'told'),
		(SELECT count(*) FROM meta WHERE name IN ('cursor_key', 'secret_key_check')),
		(SELECT count(*) FROM source_files WHERE source_id = $1)`, orphan).Scan(&windows, &metaRows, &orphans); err != nil {
		t.Fatal(err)
	}
	if windows != 0 || metaRows != 0 || orphans != 1 {
		t.Errorf("after the newer migration: %d rate windows counted or cleared, %d meta rows written, %d of 1 orphan file left; want 0, 0, 1", windows, metaRows, orphans)
	}
}

// A job the older replica is running when a newer voiceapi migrates is let go at the
// runner's next heartbeat, while its lease still runs (the run is cancelled: it could
// record nothing), and the newer replica runs it once the lease has ended: never both at
// once, and it succeeds there (docs/jobs.md, conventions §26). The lease is long (five
// minutes) and the test moves the newer runner's clock past its end once the older has
// let go: the migration may take any time a loaded CI machine gives it without the lease
// ending first, and the newer replica's claim waits for the lease, not for the wall clock.
func TestAFencedReplicasRunningJobIsTakenOverByANewerOne(t *testing.T) {
	older := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{})[0]
	ws := older.Owner.WorkspaceID
	pool := older.PG.Pool()
	ctx := context.Background()
	const kind = "test.takeover"

	var (
		mu                       sync.Mutex
		olderStarted, olderEnded time.Time
		leaseLeft                = true // whether the older run's lease still ran when it ended
		newerStarted             time.Time
		newerRuns                atomic.Int64
	)
	older.Svc.Jobs.Register(service.JobKind{Name: kind, Module: data.ModuleAgents,
		Handle: func(ctx context.Context, run *service.JobRun) error {
			mu.Lock()
			olderStarted = time.Now()
			mu.Unlock()
			<-ctx.Done()
			var running bool
			err := pool.QueryRow(context.Background(), `SELECT lease_until > now() FROM jobs WHERE id = $1`, run.Job.ID).Scan(&running)
			mu.Lock()
			olderEnded, leaseLeft = time.Now(), err == nil && running
			mu.Unlock()
			return ctx.Err()
		}})
	// The heartbeat that meets the migration waits for it (the newer replica's Open)
	// before it is refused, which on a loaded CI machine under -race can take seconds; a
	// lease of 1,500 heartbeats cannot end meanwhile, so letting go at a heartbeat is told
	// apart from a lease that ran out.
	opts := service.RunnerOptions{Lease: 5 * time.Minute, Heartbeat: 200 * time.Millisecond, Poll: 50 * time.Millisecond, Kinds: []string{kind}}
	olderOpts := opts
	olderOpts.Owner = "older"
	runner := older.Svc.Jobs.NewRunner(olderOpts)
	runner.Start(context.Background())
	t.Cleanup(func() { runner.Stop(context.Background()) })
	var job string
	if err := older.Store.Update(ctx, func(tx service.Tx) error {
		j, err := older.Svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ws, Kind: kind})
		if j != nil {
			job = j.ID
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the older replica to run the job", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !olderStarted.IsZero()
	})

	// The newer voiceapi starts on the same database: its Open migrates.
	postgres.AsNewerBinary(t, newerMigration(t))
	newer := testkit.OpenPostgres(t, func(o *postgres.Options) { o.URL = older.PG.Options().URL })
	svc := cli.NewServices(newer)
	svc.Jobs.Register(service.JobKind{Name: kind, Module: data.ModuleAgents,
		Handle: func(ctx context.Context, run *service.JobRun) error {
			mu.Lock()
			newerStarted = time.Now()
			mu.Unlock()
			newerRuns.Add(1)
			return nil
		}})
	var ahead atomic.Int64 // how far the newer runner's clock runs ahead of the wall clock
	newerOpts := opts
	newerOpts.Owner = "newer"
	newerOpts.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	newerRunner := svc.Jobs.NewRunner(newerOpts)
	newerRunner.Start(context.Background())
	t.Cleanup(func() { newerRunner.Stop(context.Background()) })

	waitUntil(t, time.Minute, "the older replica to let its run go", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !olderEnded.IsZero()
	})
	var status, owner string
	if err := pool.QueryRow(ctx, `SELECT status, lease_owner FROM jobs WHERE id = $1`, job).Scan(&status, &owner); err != nil ||
		status != "running" || owner != "older" || newerRuns.Load() != 0 {
		t.Fatalf("once the older replica let go: job %s held by %q, %d runs on the newer, %v; want it the older's until its lease ends", status, owner, newerRuns.Load(), err)
	}
	// The lease runs out: on the newer replica's clock, which claims by it.
	ahead.Store(int64(opts.Lease + time.Second))
	waitUntil(t, 20*time.Second, "the newer replica to run the job to its end", func() bool {
		return pool.QueryRow(ctx, `SELECT status FROM jobs WHERE id = $1`, job).Scan(&status) == nil && status == "succeeded"
	})
	mu.Lock()
	defer mu.Unlock()
	if olderEnded.IsZero() {
		t.Fatal("the older replica's run never ended")
	}
	if !leaseLeft {
		t.Error("the older replica let its run go only once its lease had ended, not at its next heartbeat")
	}
	if !olderEnded.Before(newerStarted) {
		t.Errorf("the job ran on both replicas at once: the older run ended at %v, the newer began at %v", olderEnded, newerStarted)
	}
	if n := newerRuns.Load(); n != 1 {
		t.Errorf("the newer replica ran the job %d times, want once", n)
	}
	if !postgres.Fenced(older.PG) || postgres.Fenced(newer) {
		t.Errorf("fenced: older %v, newer %v; want the older only", postgres.Fenced(older.PG), postgres.Fenced(newer))
	}
}

// A write that holds the fence's lock and, in the process, awaits another write that
// began after a migration asked for the lock (and so waits behind it) is a cycle
// PostgreSQL cannot see: the migration gives up its wait after a while, the awaited write
// passes, the first ends, and the migration then applies.
func TestAMigrationGivesWayToWritesAwaitingEachOther(t *testing.T) {
	r := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{})[0]
	ws, pool := r.Owner.WorkspaceID, r.PG.Pool()
	ctx := context.Background()
	postgres.ShortenFenceLockWait(t, 200*time.Millisecond)
	waiting := func(n int) func() bool {
		return func() bool {
			var c int
			return pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&c) == nil && c >= n
		}
	}

	outer, err := pool.Acquire(ctx) // the first write, holding the lock as writes do
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Release()
	if _, err := outer.Exec(ctx, `SELECT pg_advisory_lock_shared($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	newer := newerMigration(t)
	postgres.AsNewerBinary(t, newer)
	migrated := migrateInBackground(func() ([]int, error) { return postgres.Migrate(ctx, pool) })
	waitUntil(t, 10*time.Second, "the migration to wait for the lock", waiting(1))
	inner := make(chan error, 1)
	go func() {
		inner <- r.Store.Update(ctx, func(tx service.Tx) error { _, err := tx.Workspace(ws); return err })
	}()
	select {
	case err := <-inner:
		if err != nil {
			t.Errorf("the awaited write: %v, want it through (it began before the migration committed)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the awaited write never ended: the migration kept its place in the lock's queue")
	}
	if _, err := outer.Exec(ctx, `SELECT pg_advisory_unlock_shared($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	awaitAppliedOnly(t, migrated, newer.Version, "once the write ended")
}

// A rate count that arrives while a migration holds the fence's lock neither waits for it
// (reads would wait with it: the count is every request's) nor counts: it answers
// data.ErrCountBusy, for the server to count the request on its own. Once the migration
// has committed, the next count meets it: refused, nothing counted, the replica fenced.
// The migration is played by hand (the lock taken exclusively, its row added, the lock
// given back) so that the counts surely arrive while it runs.
func TestARateCountDuringAMigrationNeitherWaitsNorCounts(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	pool := db.Pool()
	ctx := context.Background()
	start := time.Now().Truncate(time.Minute)
	migration, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer migration.Release()
	if _, err := migration.Exec(ctx, `SELECT pg_advisory_lock($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	// A bound rather than a timing: a count that waited for the lock would wait for good.
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, _, err := db.CountRequest(bounded, "tmigrating", start, 10); !errors.Is(err, data.ErrCountBusy) {
		t.Errorf("a count while the migration holds the fence's lock: %v, want data.ErrCountBusy at once", err)
	}
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migration.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_a_newer_voiceapi')`, postgres.LatestVersion(all)+1); err != nil {
		t.Fatal(err)
	}
	if _, err := migration.Exec(ctx, `SELECT pg_advisory_unlock($1)`, postgres.FenceLock); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CountRequest(ctx, "tmigrating", start, 10); !errors.Is(err, data.ErrStorageSuperseded) || !postgres.Fenced(db) {
		t.Errorf("a count after the migration: %v (fenced %v), want it refused", err, postgres.Fenced(db))
	}
	var windows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM rate_windows WHERE key = 'tmigrating'`).Scan(&windows); err != nil || windows != 0 {
		t.Errorf("windows counted: %d (%v), want none", windows, err)
	}
}
