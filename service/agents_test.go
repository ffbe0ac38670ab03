package service_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// owner creates a user and returns a context acting as them in their personal
// workspace, as owner.
func owner(t testing.TB, env *testkit.Env, email string) context.Context {
	t.Helper()
	return testkit.As(env.User(t, email))
}

// decode reads body strictly into an input, as the server does, and fails on any fault.
func decode[T any](t testing.TB, body string) T {
	t.Helper()
	var in T
	if err := strictjson.Decode([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func mustAgent(t testing.TB, ctx context.Context, agents *service.AgentService, body string) *data.Agent {
	t.Helper()
	a, err := agents.CreateAgent(ctx, decode[data.AgentCreate](t, body))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Concurrent publishes of one agent each get their own version number: no number is
// lost or given twice.
func TestPublishAgentConcurrent(t *testing.T) {
	env := testkit.New(t, nil)
	agents := env.Svc.Agents
	ctx := owner(t, env, "pub@example.com")
	a := mustAgent(t, ctx, agents, `{"name":"Busy"}`)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- agents.PublishAgent(ctx, a.ID, data.PublishRequest{}) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := agents.ListAgentVersions(ctx, a.ID, data.PageRequest{PerPage: 100})
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
	cur, err := agents.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.PublishedVersion == nil || *cur.PublishedVersion != n {
		t.Fatalf("published_version = %v, want %d", cur.PublishedVersion, n)
	}
}

// The service returns credentials masked from every method, and storage holds them
// sealed: it stores what the service gives it.
func TestAgentServiceMasksAndSeals(t *testing.T) {
	env := testkit.New(t, nil)
	db, agents := env.Store, env.Svc.Agents
	ctx := owner(t, env, "seal@example.com")
	const secret = "sk-storage-secret-4321"
	a := mustAgent(t, ctx, agents, `{"name":"Sealed","llm_config":{"api_key":"`+secret+`"}}`)
	check := func(what string, key *string) {
		t.Helper()
		if key == nil || *key != "****4321" {
			t.Errorf("%s: api_key %v, want ****4321", what, key)
		}
	}
	check("create", a.LLMConfig.APIKey)
	got, err := agents.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("show", got.LLMConfig.APIKey)
	list, _, err := agents.ListAgents(ctx, data.AgentFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	check("list", list[0].LLMConfig.APIKey)
	if err := agents.PublishAgent(ctx, a.ID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	v, err := agents.AgentVersion(ctx, a.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	check("version", v.LLMConfig.APIKey)
	// The mask sent back changes nothing: the agent stays published.
	upd, err := agents.UpdateAgent(ctx, a.ID, decode[data.AgentUpdate](t, `{"llm_config":{"api_key":"****4321"}}`))
	if err != nil {
		t.Fatal(err)
	}
	check("update", upd.LLMConfig.APIKey)
	if upd.Status != data.AgentStatusPublished {
		t.Errorf("status after sending the mask back = %s", upd.Status)
	}
	// Storage holds the row and the version sealed, opening to the secret.
	err = db.View(ctx, func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		ver, err := tx.AgentVersion(a.ID, 1)
		if err != nil {
			return err
		}
		for what, k := range map[string]*string{"row": row.LLMConfig.APIKey, "version": ver.LLMConfig.APIKey} {
			if k == nil || strings.Contains(*k, secret) {
				t.Errorf("%s stores api_key %v, want it sealed", what, k)
				continue
			}
			if plain, err := db.ServiceOptions().Sealer.Open(*k); err != nil || plain != secret {
				t.Errorf("%s: the stored key opens to %q, %v", what, plain, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The encoded agents reads serve from the cache are the bytes json.Marshal gives for the
// records Agent and ListAgents return, before and after a change, and never another
// workspace's.
func TestAgentJSONMatchesTheRecord(t *testing.T) {
	env := testkit.New(t, nil)
	agents := env.Svc.Agents
	ctx := owner(t, env, "cache@example.com")
	a := mustAgent(t, ctx, agents, `{"name":"Cached"}`)
	mustAgent(t, ctx, agents, `{"name":"Other"}`)
	same := func(step string) {
		t.Helper()
		rec, err := agents.Agent(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(rec)
		for range 2 { // a miss, then a hit
			got, err := agents.AgentJSON(ctx, a.ID)
			if err != nil || string(got) != string(want) {
				t.Fatalf("%s: AgentJSON %s (%v), want %s", step, got, err, want)
			}
		}
		list, _, err := agents.ListAgents(ctx, data.AgentFilter{})
		if err != nil {
			t.Fatal(err)
		}
		raws, _, err := agents.ListAgentsJSON(ctx, data.AgentFilter{})
		if err != nil || len(raws) != len(list) || len(list) != 2 {
			t.Fatalf("%s: %d encoded, %d records (%v)", step, len(raws), len(list), err)
		}
		for i := range list {
			if w, _ := json.Marshal(list[i]); string(raws[i]) != string(w) {
				t.Fatalf("%s: item %d is %s, want %s", step, i, raws[i], w)
			}
		}
	}
	same("created")
	if _, err := agents.UpdateAgent(ctx, a.ID, decode[data.AgentUpdate](t, `{"name":"Renamed","llm_config":{"api_key":"gsk_cache_secret_42"}}`)); err != nil {
		t.Fatal(err)
	}
	same("updated")
	if got, _ := agents.AgentJSON(ctx, a.ID); !json.Valid(got) || !strings.Contains(string(got), `"Renamed"`) || strings.Contains(string(got), "gsk_cache_secret_42") {
		t.Fatalf("after the update: %s", got)
	}
	stranger := owner(t, env, "stranger@example.com")
	if _, err := agents.AgentJSON(stranger, a.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Fatalf("another workspace reads the cached agent: %v", err)
	}
}

// A change made through another service on the same storage (another process, in
// production) is seen at once: the cache is keyed by the storage's revision of the row.
func TestAgentCacheSeesOtherWriters(t *testing.T) {
	env := testkit.New(t, nil)
	mine := env.Svc.Agents
	theirs := testkit.Services(t, env.Store, nil).Agents
	ctx := owner(t, env, "two@example.com")
	a := mustAgent(t, ctx, mine, `{"name":"Before"}`)
	if _, err := mine.AgentJSON(ctx, a.ID); err != nil { // cached
		t.Fatal(err)
	}
	if _, err := theirs.UpdateAgent(ctx, a.ID, decode[data.AgentUpdate](t, `{"name":"After"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := mine.Agent(ctx, a.ID)
	if err != nil || got.Name != "After" {
		t.Fatalf("read after another writer: %v, %v", got, err)
	}
	if err := theirs.DeleteAgent(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.AgentJSON(ctx, a.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Fatalf("read after another writer deleted it: %v", err)
	}
}

// The decoder's faults given with an input are reported with the rules' faults, and
// nothing is stored.
func TestAgentFaultsAllAtOnce(t *testing.T) {
	env := testkit.New(t, nil)
	agents := env.Svc.Agents
	ctx := owner(t, env, "faults@example.com")
	var in data.AgentCreate
	err := strictjson.Decode([]byte(`{"name":"","nope":1,"llm_config":{"knowledge_base_ids":["kb_01JD6AAAAAAAAAAAAAAAAAAAAA"]}}`), &in)
	_, err = agents.CreateAgent(data.WithInputFaults(ctx, err), in)
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID {
		t.Fatalf("create: %v", err)
	}
	for _, p := range []string{"nope", "name", "llm_config.knowledge_base_ids.0"} {
		if e.Fields[p] == nil {
			t.Errorf("no fault on %s: %v", p, e.Fields)
		}
	}
	list, _, err := agents.ListAgents(ctx, data.AgentFilter{})
	if err != nil || len(list) != 0 {
		t.Fatalf("a faulty create stored %v (%v)", list, err)
	}
}
