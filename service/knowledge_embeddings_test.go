package service_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/embedtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/service"
)

// embedEnv is a workspace whose embedding provider is embedtest's stand-in, on the engine
// the tests run on, with a job runner driven by hand on an injected clock.
type embedEnv struct {
	t      *testing.T
	svc    *service.Services
	store  cli.Backend
	clock  *jobClock
	stand  *embedtest.Server
	ctx    context.Context
	ws     string
	runner *service.JobRunner
}

func newEmbedEnv(t *testing.T) *embedEnv { return newEmbedEnvVia(t, nil) }

// newEmbedEnvVia is newEmbedEnv with the provider's requests sent through transport (nil:
// the default).
func newEmbedEnvVia(t *testing.T, transport http.RoundTripper) *embedEnv {
	clock := newJobClock()
	store := testkit.OpenEngine(t)
	svc := servicesOn(t, store, store, func(o *service.Options) {
		o.Now = clock.now
		// A provider that hangs times out in 2 s: fast enough for a test, and slow enough that
		// the stand-in embedding a hundred chunks under -race on a loaded machine does not
		// (at 300 ms it did, and TestEmbeddingGroupsSources failed on a retry left for later).
		o.Knowledge.EmbedClient = &http.Client{Timeout: 2 * time.Second, Transport: transport}
	})
	stand := embedtest.Start()
	stand.Key = "sk-stand-in-0123"
	t.Cleanup(stand.Close)
	u := mustUser(t, svc, "embed@example.com")
	e := &embedEnv{t: t, svc: svc, store: store, clock: clock, stand: stand, ctx: ownerCtx(u.ID, u.PersonalWorkspaceID), ws: u.PersonalWorkspaceID}
	e.runner = svc.Jobs.NewRunner(service.RunnerOptions{Owner: "test", Lease: time.Minute, Heartbeat: time.Hour, Now: clock.now, Jitter: noJitter})
	return e
}

// setProvider points the workspace at the stand-in with model.
func (e *embedEnv) setProvider(model string) *data.Workspace {
	e.t.Helper()
	w, err := e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
		BaseURL: data.Some(ptr(e.stand.BaseURL())), Model: data.Some(ptr(model)), APIKey: data.Some(ptr(e.stand.Key))})})
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// runJobs runs what is due now, after moving the clock on by wait.
func (e *embedEnv) runJobs(wait time.Duration) {
	e.t.Helper()
	e.clock.move(wait)
	if _, err := e.runner.RunDue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *embedEnv) kb(id string) *data.KnowledgeBase {
	e.t.Helper()
	kb, err := e.svc.KnowledgeBases.KnowledgeBase(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return kb
}

func (e *embedEnv) query(id, q string) []data.KnowledgeChunk {
	e.t.Helper()
	hits, err := e.svc.KnowledgeBases.QueryKnowledgeBase(e.ctx, id, data.KnowledgeQuery{Query: q})
	if err != nil {
		e.t.Fatal(err)
	}
	return hits
}

func (e *embedEnv) wantStatus(id, status string, done, total int) *data.KnowledgeEmbeddings {
	e.t.Helper()
	got := e.kb(id).Embeddings
	if got == nil || got.Status != status || got.Progress.Done != done || got.Progress.Total != total {
		e.t.Fatalf("embeddings %+v, want %s %d/%d", got, status, done, total)
	}
	return got
}

func evidence(hits []data.KnowledgeChunk) string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Evidence)
	}
	return strings.Join(out, ",")
}

// TestWorkspaceEmbeddings: a workspace names its provider (its key sealed and masked);
// sources are embedded in the background as jobs, found lexically meanwhile and by both
// kinds of evidence after; a change of model embeds everything again.
func TestWorkspaceEmbeddings(t *testing.T) {
	e := newEmbedEnv(t)
	w := e.setProvider("model-a")
	if w.Embeddings.APIKey == nil || *w.Embeddings.APIKey != data.MaskSecret(e.stand.Key) {
		t.Errorf("api_key shown as %v, want the mask", w.Embeddings.APIKey)
	}
	if err := e.store.View(context.Background(), func(tx service.Tx) error {
		rec, err := tx.Workspace(e.ws)
		if err == nil && (rec.EmbeddingsKey == "" || strings.Contains(rec.EmbeddingsKey, e.stand.Key)) {
			t.Errorf("stored key %q: want it sealed", rec.EmbeddingsKey)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: []data.TextInput{
		{Title: "Returns", Content: "Parcels can be sent back within thirty days for a refund."},
		{Title: "Hours", Content: "The shop opens at nine and closes at six."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if kb.Embeddings == nil || kb.Embeddings.Status != data.EmbeddingsInProgress || kb.Embeddings.Progress.Total != 2 {
		t.Fatalf("a new knowledge base's embeddings %+v, want embedding 0/2", kb.Embeddings)
	}
	if ev := evidence(e.query(kb.ID, "refund parcels")); ev != "lexical" {
		t.Errorf("before the job ran, evidence %q, want lexical only", ev)
	}
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, 2, 2)
	if ev := evidence(e.query(kb.ID, "refund parcels")); !strings.HasPrefix(ev, "both") {
		t.Errorf("after the job ran, evidence %q, want both first", ev)
	}

	// The mask sent back keeps the key; a new model embeds everything again.
	_, err = e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
		Model: data.Some(ptr("model-b")), APIKey: data.Some(w.Embeddings.APIKey)})})
	if err != nil {
		t.Fatal(err)
	}
	e.wantStatus(kb.ID, data.EmbeddingsInProgress, 0, 2)
	if ev := evidence(e.query(kb.ID, "refund parcels")); ev != "lexical" {
		t.Errorf("with model-a's vectors only, evidence %q: another model's vectors must not be used", ev)
	}
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, 2, 2)
	if m := e.stand.Models(); m[len(m)-1] != "model-b" {
		t.Errorf("models asked %v, want model-b last", m)
	}

	// Back to the operator's default (none here): embeddings are off.
	_, err = e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
		BaseURL: data.Some[*string](nil), Model: data.Some[*string](nil)})})
	if err != nil {
		t.Fatal(err)
	}
	e.wantStatus(kb.ID, data.EmbeddingsOff, 0, 0)
}

// TestEmbeddingFaults: a provider that is down, answers the wrong dimension or hangs
// leaves sources searchable lexically and the fault on the knowledge base; embedding
// resumes when it answers again.
func TestEmbeddingFaults(t *testing.T) {
	e := newEmbedEnv(t)
	e.setProvider("model-a")
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: []data.TextInput{
		{Content: "Parcels can be sent back within thirty days for a refund."}}})
	if err != nil {
		t.Fatal(err)
	}
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, 1, 1)

	for _, fault := range []struct {
		name   string
		break_ func()
		mend   func()
		reason string
	}{
		{"down", func() { e.stand.SetDown(true) }, func() { e.stand.SetDown(false) }, "503"},
		{"wrong dimension", func() { e.stand.SetDim(64) }, func() { e.stand.SetDim(embedtest.DefaultDim) }, "dimensions"},
		{"timeout", func() { e.stand.SetDelay(10 * time.Second) }, func() { e.stand.SetDelay(0) }, "Timeout"},
	} {
		t.Run(fault.name, func(t *testing.T) {
			fault.break_()
			if _, err := e.svc.KnowledgeBases.AddSources(e.ctx, kb.ID, data.SourcesAdd{Texts: []data.TextInput{
				{Content: "Gift cards never expire: " + fault.name + "."}}}); err != nil {
				t.Fatal(err)
			}
			e.runJobs(0)
			got := e.kb(kb.ID).Embeddings
			if got.Status != data.EmbeddingsFailing || got.Error == nil || !strings.Contains(*got.Error, fault.reason) {
				t.Fatalf("embeddings %+v, want failing with %q", got, fault.reason)
			}
			hits := e.query(kb.ID, "gift cards "+fault.name)
			if len(hits) == 0 || !strings.Contains(hits[0].Text, "Gift cards") {
				t.Errorf("the new source is not found lexically while the provider fails: %+v", hits)
			}
			fault.mend()
			// The provider answers a query: the failed knowledge base's job runs at once, not
			// after its retry's backoff (which grows to 30 minutes).
			e.query(kb.ID, "gift cards")
			e.runJobs(0)
			total := e.kb(kb.ID).Embeddings.Progress.Total
			got = e.wantStatus(kb.ID, data.EmbeddingsReady, total, total)
			if got.Error != nil {
				t.Errorf("error %q left after the provider came back", *got.Error)
			}
		})
	}
}

func TestWorkspaceEmbeddingsRules(t *testing.T) {
	e := newEmbedEnv(t)
	for name, patch := range map[string]data.WorkspaceEmbeddingsPatch{
		"model without base_url":  {Model: data.Some(ptr("m"))},
		"base_url without model":  {BaseURL: data.Some(ptr(e.stand.BaseURL()))},
		"not a url":               {BaseURL: data.Some(ptr("ftp://x")), Model: data.Some(ptr("m"))},
		"blank model":             {BaseURL: data.Some(ptr(e.stand.BaseURL())), Model: data.Some(ptr(" "))},
		"model over 255":          {BaseURL: data.Some(ptr(e.stand.BaseURL())), Model: data.Some(ptr(strings.Repeat("m", 256)))},
		"api_key without a url":   {APIKey: data.Some(ptr("sk-1"))},
		"api_key over 4096 chars": {BaseURL: data.Some(ptr(e.stand.BaseURL())), Model: data.Some(ptr("m")), APIKey: data.Some(ptr(strings.Repeat("k", 4097)))},
	} {
		_, err := e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(patch)})
		if data.ErrorCode(err) != data.EINVALID {
			t.Errorf("%s: %v, want validation_failed", name, err)
		}
	}
	// At the bounds: accepted.
	if _, err := e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
		BaseURL: data.Some(ptr(e.stand.BaseURL())), Model: data.Some(ptr(strings.Repeat("m", 255))), APIKey: data.Some(ptr(strings.Repeat("k", 4096)))})}); err != nil {
		t.Errorf("at the bounds: %v", err)
	}
	w, err := e.svc.Workspaces.Workspace(e.ctx, e.ws)
	if err != nil || w.Embeddings.APIKey == nil || *w.Embeddings.APIKey != "****kkkk" {
		t.Errorf("after the refusals the setting is %+v (%v)", w.Embeddings, err)
	}
}

// TestEmbeddingsAfterUpgrade: sources indexed before embeddings were jobs (no embedding
// space) are embedded when a runner starts, with the operator's provider.
func TestEmbeddingsAfterUpgrade(t *testing.T) {
	e := newEmbedEnv(t)
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Old", Texts: []data.TextInput{
		{Content: "Parcels can be sent back within thirty days for a refund."}}})
	if err != nil {
		t.Fatal(err)
	}
	// The same database served by a version whose operator turned embeddings on.
	emb := knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: e.stand.BaseURL(), Model: "operator-model", APIKey: e.stand.Key})
	svc := servicesOn(t, e.store, e.store, func(o *service.Options) {
		o.Now = e.clock.now
		o.Knowledge.Embedder, o.Knowledge.EmbeddingModel = emb, "operator-model"
		o.Knowledge.EmbeddingSpace = service.EmbeddingSpace(e.stand.BaseURL(), "operator-model")
	})
	e.svc = svc
	e.wantStatus(kb.ID, data.EmbeddingsInProgress, 0, 1)
	r := svc.Jobs.NewRunner(service.RunnerOptions{Owner: "upgraded", Lease: time.Minute, Heartbeat: time.Hour, Poll: time.Hour, Now: e.clock.now, Jitter: noJitter})
	r.Start(context.Background()) // its start queues what the older version left
	defer r.Stop(context.Background())
	deadline := time.Now().Add(30 * time.Second)
	for e.kb(kb.ID).Embeddings.Status != data.EmbeddingsReady {
		if time.Now().After(deadline) {
			t.Fatalf("not embedded after the runner started: %+v", e.kb(kb.ID).Embeddings)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := e.stand.Models(); len(m) == 0 || m[0] != "operator-model" {
		t.Errorf("models asked %v, want the operator's", m)
	}
}

// TestEmbeddingGroupsSources: a knowledge base of many one-chunk sources (texts added
// through the API) is embedded about a hundred chunks to a request, not a request per
// source; a source of more chunks than a group is embedded whole; every source ends with
// vectors and the knowledge base ready.
func TestEmbeddingGroupsSources(t *testing.T) {
	e := newEmbedEnv(t)
	e.setProvider("model-a")
	const sources = 250
	texts := make([]data.TextInput, sources)
	for i := range texts {
		texts[i] = data.TextInput{Title: fmt.Sprintf("Answer %d", i), Content: fmt.Sprintf("Answer number %d says where parcel %d goes.", i, i)}
	}
	long := strings.Repeat("A long guide about returning parcels by post, step by step. ", 2000) // some 150 chunks
	texts = append(texts, data.TextInput{Title: "Guide", Content: long})
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Many", Texts: texts[:100]})
	if err != nil {
		t.Fatal(err)
	}
	for start := 100; start < len(texts); start += 100 {
		if _, err := e.svc.KnowledgeBases.AddSources(e.ctx, kb.ID, data.SourcesAdd{Texts: texts[start:min(len(texts), start+100)]}); err != nil {
			t.Fatal(err)
		}
	}
	_, chunks := e.sources(kb.ID)
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, sources+1, sources+1)
	if got := e.stand.Inputs(); got != chunks {
		t.Errorf("%d texts embedded, want the %d chunks once each", got, chunks)
	}
	// Groups of about 96 chunks: the 250 short sources take 3 requests, the guide's
	// chunks their own batches of 96; a request per source would be 251.
	if got, want := e.stand.Requests(), int64(3+(chunks-sources+95)/96+1); got > want {
		t.Errorf("%d requests to the provider for %d sources of %d chunks, want at most %d", got, sources+1, chunks, want)
	}
	all, _ := e.sources(kb.ID)
	for _, src := range all {
		if src.EmbeddingSpace == "" {
			t.Fatalf("source %s was left without vectors", src.ID)
		}
	}
}

// sources reads a knowledge base's sources from storage, with their number of chunks.
func (e *embedEnv) sources(kbID string) ([]*data.KnowledgeSource, int64) {
	e.t.Helper()
	var out []*data.KnowledgeSource
	var chunks int64
	err := e.store.View(context.Background(), func(tx service.Tx) error {
		var err error
		if out, err = tx.KnowledgeSources(kbID); err != nil {
			return err
		}
		for _, src := range out {
			cs, err := tx.SourceChunks(kbID, src.ID)
			if err != nil {
				return err
			}
			chunks += int64(len(cs))
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out, chunks
}
