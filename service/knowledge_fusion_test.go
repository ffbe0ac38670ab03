package service_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/embedtest"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/service"
)

// fusionTexts share words with fusionQuery in different measure, so that the lexical and
// the vector side score them differently.
var fusionTexts = []data.TextInput{
	{Content: "Parcels can be sent back within thirty days for a refund."},
	{Content: "A refund is paid to the card the order was paid with."},
	{Content: "Parcel lockers keep parcels for three days."},
	{Content: "The shop opens at nine and closes at six."},
}

const fusionQuery = "refund for parcels sent back"

// setShare sets the workspace's vector_share (nil: the default).
func (e *embedEnv) setShare(share *float64) *data.Workspace {
	e.t.Helper()
	w, err := e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
		VectorShare: data.Some(share)})})
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// scores maps each hit's chunk to its score.
func scores(hits []data.KnowledgeChunk) map[string]float64 {
	out := map[string]float64{}
	for _, h := range hits {
		out[h.ChunkID] = h.Score
	}
	return out
}

// sameRanking reports whether got holds the chunks of want in the same order with the same
// scores (to float32 precision: vectors are stored as float32).
func sameRanking(got, want []data.KnowledgeChunk) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].ChunkID != want[i].ChunkID || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
			return false
		}
	}
	return true
}

// TestWorkspaceVectorShare: the workspace's vector_share is the fusion of its hybrid
// queries: 0 ranks exactly as the words alone, 1 exactly as the vectors' cosine alone, null
// as the default blend.
func TestWorkspaceVectorShare(t *testing.T) {
	e := newEmbedEnv(t)
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: fusionTexts})
	if err != nil {
		t.Fatal(err)
	}
	lexical := e.query(kb.ID, fusionQuery) // no provider: the words alone
	if len(lexical) < 2 {
		t.Fatalf("lexical hits %+v: want at least two to rank", lexical)
	}
	e.setProvider("model-a")
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, len(fusionTexts), len(fusionTexts))
	blended := e.query(kb.ID, fusionQuery)
	if sameRanking(blended, lexical) {
		t.Fatalf("the default blend ranks as the words alone (%+v): the test cannot tell the shares apart", blended)
	}

	w := e.setShare(ptr(0.0))
	if w.Embeddings.VectorShare == nil || *w.Embeddings.VectorShare != 0 {
		t.Fatalf("vector_share shown as %v, want 0", w.Embeddings.VectorShare)
	}
	if got := e.query(kb.ID, fusionQuery); !sameRanking(got, lexical) {
		t.Errorf("share 0 ranks %v, want the lexical ranking %v", scores(got), scores(lexical))
	}

	e.setShare(ptr(1.0))
	got := e.query(kb.ID, fusionQuery)
	q := embedtest.Vector(fusionQuery, embedtest.DefaultDim)
	for i, text := range fusionTexts { // every text sharing a feature with the question scores its cosine
		if sim := cosine(q, embedtest.Vector(text.Content, embedtest.DefaultDim)); sim > 0 {
			found := false
			for _, h := range got {
				if h.Text == text.Content {
					found = true
					if math.Abs(h.Score-sim) > 1e-5 {
						t.Errorf("share 1: text %d scores %.6f, want its cosine %.6f", i, h.Score, sim)
					}
				}
			}
			if !found {
				t.Errorf("share 1: text %d (cosine %.4f) not found", i, sim)
			}
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("share 1: hits not best first: %v", scores(got))
		}
	}

	e.setShare(nil) // back to the default
	if got := e.query(kb.ID, fusionQuery); !sameRanking(got, blended) {
		t.Errorf("share null ranks %v, want the default blend %v", scores(got), scores(blended))
	}
}

// TestWorkspaceVectorShareRefused: a share outside [0, 1] is refused on its field and the
// stored share stays.
func TestWorkspaceVectorShareRefused(t *testing.T) {
	e := newEmbedEnv(t)
	e.setShare(ptr(0.3))
	for _, bad := range []float64{-0.0001, 1.0001} {
		_, err := e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
			VectorShare: data.Some(ptr(bad))})})
		var fault *data.Error
		if data.ErrorCode(err) != data.EINVALID || !errors.As(err, &fault) || len(fault.Fields["embeddings.vector_share"]) == 0 {
			t.Errorf("vector_share %v: %v, want a fault on embeddings.vector_share", bad, err)
		}
	}
	w, err := e.svc.Workspaces.Workspace(e.ctx, e.ws)
	if err != nil || w.Embeddings.VectorShare == nil || *w.Embeddings.VectorShare != 0.3 {
		t.Errorf("after the refusals vector_share is %v (%v), want 0.3", w.Embeddings.VectorShare, err)
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// setEnabled turns the workspace's embeddings on or off.
func (e *embedEnv) setEnabled(on bool) *data.Workspace {
	e.t.Helper()
	w, err := e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, data.WorkspaceUpdate{Embeddings: data.Some(data.WorkspaceEmbeddingsPatch{
		Enabled: data.Some(on)})})
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// TestWorkspaceEmbeddingsDisabled: with enabled false the workspace uses no provider:
// nothing is embedded (a source added meanwhile included), its knowledge bases show off
// and queries are answered lexically, the stored vectors kept; enabled true again embeds
// what lacks vectors and queries find by both kinds of evidence again.
func TestWorkspaceEmbeddingsDisabled(t *testing.T) {
	e := newEmbedEnv(t)
	if w := e.setProvider("model-a"); w.Embeddings.Enabled == nil || !*w.Embeddings.Enabled {
		t.Fatalf("a workspace's embeddings shown as enabled %v, want true", w.Embeddings.Enabled)
	}
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: fusionTexts[:2]})
	if err != nil {
		t.Fatal(err)
	}
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, 2, 2)

	if w := e.setEnabled(false); w.Embeddings.Enabled == nil || *w.Embeddings.Enabled || w.Embeddings.Model == nil {
		t.Fatalf("disabled, the setting shows %+v: want enabled false and the provider kept", w.Embeddings)
	}
	e.wantStatus(kb.ID, data.EmbeddingsOff, 0, 0)
	asked := e.stand.Inputs()
	requests := e.stand.Requests()
	if _, err := e.svc.KnowledgeBases.AddSources(e.ctx, kb.ID, data.SourcesAdd{Texts: fusionTexts[2:]}); err != nil {
		t.Fatal(err)
	}
	if ev := evidence(e.query(kb.ID, fusionQuery)); strings.Contains(ev, "both") || strings.Contains(ev, "vector") {
		t.Errorf("disabled, evidence %q: want lexical only", ev)
	}
	e.runJobs(time.Hour)
	if e.stand.Requests() != requests || e.stand.Inputs() != asked {
		t.Errorf("disabled, the provider was asked %d more times", e.stand.Requests()-requests)
	}
	e.wantStatus(kb.ID, data.EmbeddingsOff, 0, 0)

	if w := e.setEnabled(true); w.Embeddings.Enabled == nil || !*w.Embeddings.Enabled {
		t.Fatalf("enabled again, the setting shows %+v", w.Embeddings)
	}
	e.wantStatus(kb.ID, data.EmbeddingsInProgress, 2, 4) // the vectors kept count; the sources added meanwhile wait
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, 4, 4)
	if got := e.stand.Inputs() - asked; got != 2 {
		t.Errorf("enabled again, %d texts embedded, want the 2 added while disabled", got)
	}
	if ev := evidence(e.query(kb.ID, fusionQuery)); !strings.HasPrefix(ev, "both") {
		t.Errorf("enabled again, evidence %q, want both first", ev)
	}
}

// TestWorkspaceEmbeddingsDisabledOperatorDefault: enabled false turns off the operator's
// default provider too, for that workspace only.
func TestWorkspaceEmbeddingsDisabledOperatorDefault(t *testing.T) {
	e := newEmbedEnv(t)
	emb := knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: e.stand.BaseURL(), Model: "operator-model", APIKey: e.stand.Key})
	e.svc = servicesOn(t, e.store, e.store, func(o *service.Options) {
		o.Now = e.clock.now
		o.Knowledge.Embedder, o.Knowledge.EmbeddingModel = emb, "operator-model"
		o.Knowledge.EmbeddingSpace = service.EmbeddingSpace(e.stand.BaseURL(), "operator-model")
	})
	e.runner = e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: "test", Lease: time.Minute, Heartbeat: time.Hour, Now: e.clock.now, Jitter: noJitter})
	e.setEnabled(false)
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Support", Texts: fusionTexts})
	if err != nil {
		t.Fatal(err)
	}
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsOff, 0, 0)
	if ev := evidence(e.query(kb.ID, fusionQuery)); strings.Contains(ev, "both") || strings.Contains(ev, "vector") {
		t.Errorf("disabled under the operator's default, evidence %q: want lexical only", ev)
	}
	if n := e.stand.Requests(); n != 0 {
		t.Errorf("disabled, the operator's provider was asked %d times", n)
	}
	e.setEnabled(true)
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsReady, len(fusionTexts), len(fusionTexts))
}
