package service_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// heldTransport holds the provider's request number hold (counted from 1 once armed)
// until release is closed, telling reached when it is there.
type heldTransport struct {
	armed, n         atomic.Int64
	hold             int64
	reached, release chan struct{}
}

func (h *heldTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.armed.Load() == 1 && h.n.Add(1) == h.hold {
		close(h.reached)
		<-h.release
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestEmbeddingResumedIsNoLongerFailing: once the provider answers a resumed job, the
// knowledge base says embedding (its progress moving) and no longer failing with the old
// reason, which stayed shown until the whole job ended (with thousands of sources, for
// minutes while the vectors came in). Run on both engines.
func TestEmbeddingResumedIsNoLongerFailing(t *testing.T) {
	hold := &heldTransport{hold: 3, reached: make(chan struct{}), release: make(chan struct{})}
	e := newEmbedEnvVia(t, hold)
	e.setProvider("model-a")
	texts := make([]data.TextInput, 100) // one chunk each: two groups of the job
	for i := range texts {
		texts[i] = data.TextInput{Content: fmt.Sprintf("Parcel %d leaves the warehouse on weekdays.", i)}
	}
	kb := e.failingKnowledgeBase(texts)
	hold.armed.Store(1)
	e.query(kb.ID, "parcel") // request 1, the provider is back: the job is due at once (2, 3: its groups)
	done := make(chan error, 1)
	go func() { _, err := e.runner.RunDue(context.Background()); done <- err }()
	<-hold.reached // the job's first group is stored, its second asked for
	got := e.kb(kb.ID).Embeddings
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got.Status != data.EmbeddingsInProgress || got.Error != nil || got.Progress.Done == 0 {
		t.Errorf("while the resumed job embeds: %s, error %v, %d of %d done; want embedding, no error, progress",
			got.Status, got.Error, got.Progress.Done, got.Progress.Total)
	}
	e.wantStatus(kb.ID, data.EmbeddingsReady, 100, 100)
}

// hungTransport hangs the provider's request number hold (counted from 1 once armed)
// until the request's own deadline ends it, telling reached when it is there: a provider
// that stopped answering mid-request.
type hungTransport struct {
	armed, n atomic.Int64
	hold     int64
	reached  chan struct{}
}

func (h *hungTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.armed.Load() == 1 && h.n.Add(1) == h.hold {
		close(h.reached)
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestEmbeddingHungRetryHastened: a query that finds the provider answering while the
// embed job's attempt still hangs on it makes the retry that attempt queues when it times
// out due at once, not after the full backoff (walk4 waited about 40 s). Run on both
// engines.
func TestEmbeddingHungRetryHastened(t *testing.T) {
	hung := &hungTransport{hold: 1, reached: make(chan struct{})}
	e := newEmbedEnvVia(t, hung)
	e.setProvider("model-a")
	kb := e.failingKnowledgeBase([]data.TextInput{{Content: "Parcels leave the warehouse on weekdays."}})
	hung.armed.Store(1)
	e.clock.move(time.Hour) // the first retry is due: its request hangs
	done := make(chan error, 1)
	go func() { _, err := e.runner.RunDue(context.Background()); done <- err }()
	<-hung.reached
	e.query(kb.ID, "parcel") // the provider answers the query meanwhile
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e.wantStatus(kb.ID, data.EmbeddingsFailing, 0, 1) // the hung attempt timed out
	e.runJobs(0)                                      // the clock has not moved: only a hurried retry is due
	e.wantStatus(kb.ID, data.EmbeddingsReady, 1, 1)
}

// failingKnowledgeBase makes a knowledge base of texts whose embed job failed, the
// provider down, with its retry waiting; the provider is then back.
func (e *embedEnv) failingKnowledgeBase(texts []data.TextInput) *data.KnowledgeBase {
	e.t.Helper()
	e.stand.SetDown(true)
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Parcels", Texts: texts})
	if err != nil {
		e.t.Fatal(err)
	}
	e.runJobs(0)
	e.wantStatus(kb.ID, data.EmbeddingsFailing, 0, len(texts))
	e.stand.SetDown(false)
	return kb
}
