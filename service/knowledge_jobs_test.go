package service_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// fakeFetcher answers every url with its page and records what was asked.
type fakeFetcher struct {
	mu   sync.Mutex
	urls []string
	page string
}

func (f *fakeFetcher) Fetch(_ context.Context, rawURL string) data.FetchedURL {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.urls = append(f.urls, rawURL)
	return data.FetchedURL{Body: []byte(f.page), ContentType: "text/plain"}
}

func (f *fakeFetcher) fetched() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.urls)
}

// kbJobEnv is the services with a workspace owner, a clock and a fake url fetcher.
type kbJobEnv struct {
	*jobEnv
	ctx     context.Context
	ws      string
	fetcher *fakeFetcher
}

func newKBJobEnv(t *testing.T) *kbJobEnv {
	clock := newJobClock()
	db := testkit.OpenEngine(t)
	svc := servicesOn(t, db, db, func(o *service.Options) { o.Now = clock.now })
	u := mustUser(t, svc, "jobs@example.com")
	f := &fakeFetcher{page: "Delivery takes three days."}
	svc.KnowledgeBases.UseURLFetcher(f)
	return &kbJobEnv{jobEnv: &jobEnv{t: t, svc: svc, store: db, clock: clock},
		ctx: ownerCtx(u.ID, u.PersonalWorkspaceID), ws: u.PersonalWorkspaceID, fetcher: f}
}

// fetchJobs lists the workspace's url fetch jobs, newest first.
func (e *kbJobEnv) fetchJobs() []*data.JobRecord {
	e.t.Helper()
	var out []*data.JobRecord
	if err := e.store.View(context.Background(), func(tx service.Tx) error {
		list, _, err := tx.Jobs(e.ws, data.PageRequest{PerPage: 100})
		for _, j := range list {
			if j.Kind == service.JobKindFetchURL {
				out = append(out, j)
			}
		}
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestURLSourceFetchedByItsJob: adding a url source queues its fetch job in the same
// transaction; the job fetches and indexes it once; a refetch queues a new job; a job
// run again after its work committed does nothing.
func TestURLSourceFetchedByItsJob(t *testing.T) {
	e := newKBJobEnv(t)
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Web", URLs: []string{"https://example.com/a"}})
	if err != nil {
		t.Fatal(err)
	}
	src := kb.URLs[0]
	jobs := e.fetchJobs()
	if len(jobs) != 1 || jobs[0].Status != data.JobQueued || jobs[0].WorkspaceID != e.ws || jobs[0].UniqueKey != src.ID+"/1" {
		t.Fatalf("jobs after the create: %+v; want one queued fetch of attempt 1", jobs)
	}
	r := e.runner("r")
	if n := e.runDue(r); n != 1 {
		t.Fatalf("ran %d jobs", n)
	}
	got, _ := e.svc.KnowledgeBases.KnowledgeBase(e.ctx, kb.ID)
	if got.URLs[0].Status != data.SourceIndexed || e.job(jobs[0].ID).Status != data.JobSucceeded {
		t.Fatalf("after the job: source %+v, job %+v", got.URLs[0], e.job(jobs[0].ID))
	}
	if _, err := e.svc.KnowledgeBases.RefetchURL(e.ctx, kb.ID, src.ID); err != nil {
		t.Fatal(err)
	}
	jobs = e.fetchJobs()
	if len(jobs) != 2 || jobs[0].UniqueKey != src.ID+"/2" {
		t.Fatalf("jobs after the refetch: %+v; want a second job, for attempt 2", jobs)
	}
	e.runDue(r)
	if f := e.fetcher.fetched(); len(f) != 2 {
		t.Errorf("fetched %v, want the url twice (create and refetch)", f)
	}
	// The refetch's job run once more, as after a crash between its work and its end:
	// the source is no longer pending for that attempt, so nothing is fetched.
	if err := e.store.Update(context.Background(), func(tx service.Tx) error {
		_, err := tx.EnqueueJob(&data.JobRecord{Job: data.Job{ID: "job_01JD6ZZZZZZZZZZZZZZZZZZZZZ", WorkspaceID: e.ws, Kind: service.JobKindFetchURL,
			Status: data.JobQueued, MaxAttempts: 1, RunAt: data.NewTime(e.clock.now()), CreatedAt: data.NewTime(e.clock.now())}, Payload: jobs[0].Payload})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.runDue(r)
	if f := e.fetcher.fetched(); len(f) != 2 {
		t.Errorf("a fetch job run again fetched again: %v", f)
	}
}

// failingCommits is a store whose write transactions all fail after their function ran
// (a commit that did not happen) while fail is set.
type failingCommits struct {
	service.Store
	fail atomic.Bool
}

var errJobCommitFailed = errors.New("the commit failed")

func (f *failingCommits) Update(ctx context.Context, fn func(tx service.Tx) error) error {
	return f.Store.Update(ctx, func(tx service.Tx) error {
		if err := fn(tx); err != nil || !f.fail.Load() {
			return err
		}
		return errJobCommitFailed
	})
}

// TestURLFetchJobCommitsWithItsSource: the fetch job is written in the transaction that
// writes its url source, so a create that does not commit leaves neither.
func TestURLFetchJobCommitsWithItsSource(t *testing.T) {
	db := testkit.OpenEngine(t)
	store := &failingCommits{Store: db}
	svc := servicesOn(t, store, db, nil)
	u := mustUser(t, svc, "rollback@example.com")
	ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
	store.fail.Store(true)
	if _, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Web", URLs: []string{"https://example.com/a"}}); !errors.Is(err, errJobCommitFailed) {
		t.Fatalf("create = %v, want the failed commit", err)
	}
	store.fail.Store(false)
	var jobs []*data.JobRecord
	var pending []*data.KnowledgeSource
	if err := db.View(context.Background(), func(tx service.Tx) (err error) {
		if jobs, _, err = tx.Jobs(u.PersonalWorkspaceID, data.PageRequest{}); err != nil {
			return err
		}
		pending, err = tx.PendingURLSources()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 || len(pending) != 0 {
		t.Errorf("after a create that did not commit: jobs %v, pending sources %v; want none", jobs, pending)
	}
	if _, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Web", URLs: []string{"https://example.com/a"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.View(context.Background(), func(tx service.Tx) (err error) {
		jobs, _, err = tx.Jobs(u.PersonalWorkspaceID, data.PageRequest{})
		return err
	}); err != nil || len(jobs) != 1 {
		t.Errorf("after a create that committed: jobs %v, %v; want its fetch job", jobs, err)
	}
}

// TestURLFetchJobsForAnUpgradedDatabase: a pending url source stored without a job (by a
// version before fetches were jobs) gets one when a runner starts, once however many
// runners start.
func TestURLFetchJobsForAnUpgradedDatabase(t *testing.T) {
	e := newKBJobEnv(t)
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Old"})
	if err != nil {
		t.Fatal(err)
	}
	old := &data.KnowledgeSource{ID: "src_01JD6ZZZZZZZZZZZZZZZZZZZZZ", Type: data.SourceURLs, KnowledgeBaseID: kb.ID, WorkspaceID: e.ws,
		URL: "https://example.com/old", Status: data.SourcePending, Attempt: 3, CreatedAt: data.NewTime(e.clock.now())}
	if err := e.store.Update(context.Background(), func(tx service.Tx) error { return tx.PutKnowledgeSource(old) }); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{"a", "b"} {
		r := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: owner, Poll: time.Hour, Now: e.clock.now, Kinds: []string{"none"}})
		r.Start(context.Background()) // its kinds' AtStart hooks run before it claims
		r.Stop(context.Background())
	}
	if jobs := e.fetchJobs(); len(jobs) != 0 {
		t.Fatalf("a runner of other kinds enqueued %v", jobs)
	}
	for _, owner := range []string{"a", "b"} {
		r := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: owner, Poll: time.Hour, Now: e.clock.now, Kinds: []string{service.JobKindFetchURL}})
		r.Start(context.Background())
		r.Stop(context.Background())
	}
	e.runDue(e.runner("r"))
	got, _ := e.svc.KnowledgeBases.KnowledgeBase(e.ctx, kb.ID)
	jobs := e.fetchJobs()
	if len(jobs) != 1 || jobs[0].UniqueKey != old.ID+"/3" || got.URLs[0].Status != data.SourceIndexed {
		t.Errorf("after two starts: jobs %+v, source %+v; want one job for attempt 3, the source indexed", jobs, got.URLs[0])
	}
}

// TestURLFetchWaitsForAFetcher: a fetch job run before the server handed the service its
// fetcher is retried, not failed.
func TestURLFetchWaitsForAFetcher(t *testing.T) {
	clock := newJobClock()
	db := testkit.OpenEngine(t)
	svc := servicesOn(t, db, db, func(o *service.Options) { o.Now = clock.now })
	u := mustUser(t, svc, "nofetcher@example.com")
	e := &jobEnv{t: t, svc: svc, store: db, clock: clock}
	kb, err := svc.KnowledgeBases.CreateKnowledgeBase(ownerCtx(u.ID, u.PersonalWorkspaceID), data.KnowledgeBaseCreate{Name: "Web", URLs: []string{"https://example.com/a"}})
	if err != nil {
		t.Fatal(err)
	}
	e.runDue(e.runner("r"))
	var jobs []*data.JobRecord
	db.View(context.Background(), func(tx service.Tx) (err error) {
		jobs, _, err = tx.Jobs(u.PersonalWorkspaceID, data.PageRequest{})
		return err
	})
	if len(jobs) != 1 || jobs[0].Status != data.JobQueued || jobs[0].Attempt != 1 || jobs[0].LastError == nil {
		t.Errorf("the fetch job without a fetcher: %+v; want queued for a retry", jobs)
	}
	if kb.URLs[0].Status != data.SourcePending {
		t.Errorf("source %+v", kb.URLs[0])
	}
}
