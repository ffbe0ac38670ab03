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
