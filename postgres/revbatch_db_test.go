package postgres_test

import (
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// While other checks keep shared statements in flight, a check made after a commit reads
// that commit's revision every time: shared statements never answer a check with a
// snapshot older than the check, nor an agent's revision taken since a token's snapshot
// with an older one.
func TestSharedRevisionReadsSeeEveryEarlierCommit(t *testing.T) {
	f := newRevisionFixture(t)
	db, svc, ctx, u, ws, key, pctx, agent := f.db, f.svc, f.ctx, f.user, f.ws, f.key, f.pctx, f.agent

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if i%2 == 0 {
					_, err = db.AgentRevision(ctx, agent.ID, 0)
				} else {
					_, err = db.TokenRevisions(ctx, key.ID, u.ID, ws)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()

	for i := range 100 {
		if _, err := svc.Agents.UpdateAgent(pctx, agent.ID, data.AgentUpdate{Name: data.Some("A" + string(rune('a'+i%26)))}); err != nil {
			t.Fatal(err)
		}
		var want uint64
		if err := db.View(ctx, func(tx service.Tx) error {
			var err error
			want, err = tx.AgentRevision(agent.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got, err := db.AgentRevision(ctx, agent.ID, 0); err != nil || got != want {
			t.Fatalf("update %d: a check after the commit reads revision %d (%v), the committed one is %d", i, got, err, want)
		}
		// A request after the commit: its token check, then the agent since that check
		// (from memory, the agent being hot).
		tr, err := db.TokenRevisions(ctx, key.ID, u.ID, ws)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := db.AgentRevision(ctx, agent.ID, tr.Read); err != nil || got != want {
			t.Fatalf("update %d: the agent since the token's snapshot reads revision %d (%v), the committed one is %d", i, got, err, want)
		}
	}
	// The key revoked: the next check reads it gone, though statements are in flight.
	if err := svc.Auth.DeleteAPIKey(pctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if r, err := db.TokenRevisions(ctx, key.ID, u.ID, ws); err != nil || r.Key != 0 {
		t.Errorf("a revoked key reads revision %d (%v) on the next check", r.Key, err)
	}
}
