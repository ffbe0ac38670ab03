package bolt_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func mustAgent(t testing.TB, ctx context.Context, db interface {
	CreateAgent(context.Context, map[string]json.RawMessage) (*data.Agent, error)
}, name string) *data.Agent {
	t.Helper()
	a, err := db.CreateAgent(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"` + name + `"`)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Concurrent publishes of one agent each get their own version number: no number is
// lost or given twice.
func TestPublishAgentConcurrent(t *testing.T) {
	db := openTestDB(t)
	u := mustUser(t, db, "pub@example.com")
	ctx := asUser(t, db, u)
	a := mustAgent(t, ctx, db, "Busy")
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- db.PublishAgent(ctx, a.ID, nil) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := db.ListAgentVersions(ctx, a.ID, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, v := range list {
		got = append(got, v.VersionNumber)
	}
	want := make([]int, n)
	for i := range want {
		want[i] = n - i
	}
	if !slices.Equal(got, want) {
		t.Fatalf("versions = %v, want %v", got, want)
	}
	cur, err := db.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.PublishedVersion == nil || *cur.PublishedVersion != n {
		t.Fatalf("published_version = %v, want %d", cur.PublishedVersion, n)
	}
}

// The storage returns credentials masked from every method and keeps the secret sealed.
func TestAgentStorageMasksAndSeals(t *testing.T) {
	db := openTestDB(t)
	u := mustUser(t, db, "seal@example.com")
	ctx := asUser(t, db, u)
	const secret = "sk-storage-secret-4321"
	a, err := db.CreateAgent(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"Sealed"`), "llm_config": json.RawMessage(`{"api_key":"` + secret + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, key *string) {
		t.Helper()
		if key == nil || *key != "****4321" {
			t.Errorf("%s: api_key %v, want ****4321", what, key)
		}
	}
	check("create", a.LLMConfig.APIKey)
	got, err := db.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("show", got.LLMConfig.APIKey)
	list, _, err := db.ListAgents(ctx, data.AgentFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	check("list", list[0].LLMConfig.APIKey)
	if err := db.PublishAgent(ctx, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	v, err := db.AgentVersion(ctx, a.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	check("version", v.LLMConfig.APIKey)
	// The mask sent back changes nothing: the agent stays published.
	upd, err := db.UpdateAgent(ctx, a.ID, map[string]json.RawMessage{"llm_config": json.RawMessage(`{"api_key":"****4321"}`)})
	if err != nil {
		t.Fatal(err)
	}
	check("update", upd.LLMConfig.APIKey)
	if upd.Status != data.AgentStatusPublished {
		t.Errorf("status after sending the mask back = %s", upd.Status)
	}
	// Sealing is not deterministic and opens to the secret.
	s1, err := db.Seal(secret)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := db.Seal(secret)
	if s1 == s2 || s1 == secret {
		t.Errorf("Seal gives %q twice", s1)
	}
	if plain, err := db.Unseal(s1); err != nil || plain != secret {
		t.Errorf("Unseal = %q, %v", plain, err)
	}
}
