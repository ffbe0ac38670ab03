package service_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/embedtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// eachViewStore calls afterView after every read transaction while it is set; a write
// the hook makes through the services does not call it again.
type eachViewStore struct {
	service.Store
	afterView atomic.Pointer[func()]
	inHook    atomic.Bool
}

func (s *eachViewStore) View(ctx context.Context, fn func(tx service.Tx) error) error {
	err := s.Store.View(ctx, fn)
	if f := s.afterView.Load(); f != nil && s.inHook.CompareAndSwap(false, true) {
		(*f)()
		s.inHook.Store(false)
	}
	return err
}

// A knowledge base has one embed job pending at a time (its unique key), and a source
// indexed while that job runs finds it pending and queues nothing: the running job is to
// find the source when it looks again. A source indexed after the job's last look, before
// its end committed, was found by nobody: it stayed without vectors (searched lexically
// only, its knowledge base "embedding" for good) until the server restarted. The hook
// adds the source right after the job's last look: the read that follows the first
// source's vectors being stored. The job's end must notice it and run the job again.
func TestSourceIndexedAsTheEmbedJobEndsIsEmbedded(t *testing.T) {
	clock := newJobClock()
	engine := testkit.OpenEngine(t)
	store := &eachViewStore{Store: engine}
	svc := servicesOn(t, store, engine, func(o *service.Options) {
		o.Now = clock.now
		o.Knowledge.EmbedClient = &http.Client{Timeout: 5 * time.Second}
	})
	stand := embedtest.Start()
	stand.Key = "sk-stand-in-0123"
	t.Cleanup(stand.Close)
	u := mustUser(t, svc, "embed@example.com")
	ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
	if _, err := svc.Workspaces.UpdateWorkspace(ctx, u.PersonalWorkspaceID, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
		BaseURL: data.Some(ptr(stand.BaseURL())), Model: data.Some(ptr("model-a")), APIKey: data.Some(ptr(stand.Key))})}); err != nil {
		t.Fatal(err)
	}
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Owner: "test", Lease: time.Minute, Heartbeat: time.Hour, Now: clock.now, Jitter: noJitter})
	kb, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: []data.TextInput{
		{Content: "Parcels can be sent back within thirty days for a refund."}}})
	if err != nil {
		t.Fatal(err)
	}
	var added atomic.Bool
	hook := func() {
		if added.Load() || stand.Requests() == 0 {
			return // the job has not embedded the first source yet
		}
		added.Store(true)
		if _, err := svc.KnowledgeBases.AddSources(ctx, kb.ID, data.SourcesAdd{Texts: []data.TextInput{
			{Content: "Gift cards never expire."}}}); err != nil {
			t.Error(err)
		}
	}
	store.afterView.Store(&hook)
	for range 3 { // the job, and the runs its end asked for
		if _, err := runner.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	store.afterView.Store(nil)
	if !added.Load() {
		t.Fatal("the hook never added the second source")
	}
	got, err := svc.KnowledgeBases.KnowledgeBase(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Embeddings; e == nil || e.Status != data.EmbeddingsReady || e.Progress.Done != 2 || e.Progress.Total != 2 {
		t.Errorf("embeddings after the jobs ran: %+v, want ready 2/2", e)
	}
}

// An embed job whose lease ran out while the provider was slow (runner A) is taken over
// by another runner (B), which embeds every source and ends the job. A's answer then
// fails: A may no longer write anything, not even the failure it would record on the
// knowledge base, which then showed "failing" with a provider error though every source
// had its vectors (until a query queued the job again). The stand-in holds A's request 1.5 s
// and answers it 503 after B is done.
func TestEmbedJobThatLostItsLeaseRecordsNoFailure(t *testing.T) {
	e := newEmbedEnv(t)
	e.setProvider("model-a")
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: []data.TextInput{
		{Content: "Parcels can be sent back within thirty days for a refund."}}})
	if err != nil {
		t.Fatal(err)
	}
	e.stand.SetDelay(1500 * time.Millisecond) // under the env's 2 s client timeout
	aDone := make(chan error, 1)
	go func() { _, err := e.runner.RunDue(context.Background()); aDone <- err }()
	for e.stand.Requests() == 0 { // A's request is held
		time.Sleep(5 * time.Millisecond)
	}
	e.stand.SetDelay(0)
	e.clock.move(2 * time.Minute) // A's lease (a minute) ends without a heartbeat
	b := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: "runner-b", Lease: time.Minute, Heartbeat: time.Hour, Now: e.clock.now, Jitter: noJitter})
	if n, err := b.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("B ran %d jobs: %v", n, err)
	}
	e.wantStatus(kb.ID, data.EmbeddingsReady, 1, 1)
	e.stand.SetDown(true) // A's held request is answered 503
	if err := recv(t, aDone, "the end of A's run"); err != nil {
		t.Fatal(err)
	}
	if got := e.kb(kb.ID).Embeddings; got.Status != data.EmbeddingsReady || got.Error != nil {
		t.Errorf("embeddings after A's late failure: %s, error %v; want ready without error", got.Status, ptrText(got.Error))
	}
}

// ptrText is *s, or "none".
func ptrText(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}

// A knowledge base deleted while its embed job waits on the provider: the vectors that
// come back find no source to go to, nothing of the knowledge base is written again (no
// source, no chunks, no embedding state), and the job ends succeeded with nothing left
// to do. The stand-in holds the request until the delete committed.
func TestEmbedJobDoesNotOutliveItsKnowledgeBase(t *testing.T) {
	e := newEmbedEnv(t)
	e.setProvider("model-a")
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: []data.TextInput{
		{Content: "Parcels can be sent back within thirty days for a refund."}}})
	if err != nil {
		t.Fatal(err)
	}
	sources, _ := e.sources(kb.ID)
	e.stand.SetDelay(500 * time.Millisecond)
	done := make(chan error, 1)
	go func() { _, err := e.runner.RunDue(context.Background()); done <- err }()
	for e.stand.Requests() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := e.svc.KnowledgeBases.DeleteKnowledgeBase(e.ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, done, "the end of the run"); err != nil {
		t.Fatal(err)
	}
	err = e.store.View(context.Background(), func(tx service.Tx) error {
		if got, err := tx.KnowledgeBase(kb.ID); err != nil || got != nil {
			t.Errorf("the knowledge base after the job: %+v, %v; want gone", got, err)
		}
		for _, src := range sources {
			if got, err := tx.KnowledgeSource(kb.ID, src.ID); err != nil || got != nil {
				t.Errorf("source %s after the job: %+v, %v; want gone", src.ID, got, err)
			}
			if chunks, err := tx.SourceChunks(kb.ID, src.ID); err != nil || len(chunks) != 0 {
				t.Errorf("source %s's chunks after the job: %d, %v; want none", src.ID, len(chunks), err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := e.svc.Jobs.ListJobs(e.ctx, data.JobFilter{Kind: service.JobKindEmbed}, data.PageRequest{})
	if err != nil || len(jobs) != 1 || jobs[0].Status != data.JobSucceeded {
		t.Errorf("the embed job after its knowledge base was deleted = %s, %v; want succeeded", jobStatuses(jobs), err)
	}
}
