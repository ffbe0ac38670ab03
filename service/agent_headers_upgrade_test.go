package service_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// TestCredentialHeaderStoredInTheClear: an agent and a version stored before credential
// headers were sealed (the value in the clear) read as they are, masked in answers, and
// the agent's next write seals the header, its value kept (docs/upgrading.md).
func TestCredentialHeaderStoredInTheClear(t *testing.T) {
	env := testkit.New(t, nil)
	ctx := owner(t, env, "legacy@example.com")
	const header = "Authorization: Bearer sk_live_abcdefgh1234"
	a := mustAgent(t, ctx, env.Svc.Agents, `{"name":"Legacy","llm_config":{"provider":"groq","model":"llama-3.3-70b-versatile",
		"tools":[{"name":"crm","type":"custom_function","http_method":"POST","api_endpoint":"https://crm.example.com/o","custom_function_headers":["X-Tenant: acme"]}]}}`)
	// What an older version of voiceapi wrote: the header in the clear, row and version.
	err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		tool := *row.LLMConfig.Tools[0]
		tool.CustomFunctionHeaders = []string{header, "X-Tenant: acme"}
		row.LLMConfig.Tools = []*data.Tool{&tool}
		row.JSON, row.LastVersion = nil, 1
		if err := tx.PutAgent(row, row.Status); err != nil {
			return err
		}
		return tx.PutAgentVersion(&data.AgentVersion{AgentID: a.ID, VersionNumber: 1, Name: row.Name, AgentConfig: row.AgentConfig, CreatedAt: row.CreatedAt})
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := testkit.Services(t, env.Store, nil).Agents // no cache of the row written above
	want := []string{"Authorization: ****1234", "X-Tenant: acme"}
	got, err := svc.Agent(ctx, a.ID)
	if err != nil {
		t.Fatalf("reading the agent stored in the clear: %v", err)
	}
	if h := got.LLMConfig.Tools[0].CustomFunctionHeaders; !slices.Equal(h, want) {
		t.Errorf("agent headers %q, want %q", h, want)
	}
	v, err := svc.AgentVersion(ctx, a.ID, 1)
	if err != nil {
		t.Fatalf("reading the version stored in the clear: %v", err)
	}
	if h := v.LLMConfig.Tools[0].CustomFunctionHeaders; !slices.Equal(h, want) {
		t.Errorf("version headers %q, want %q", h, want)
	}

	if _, err := svc.UpdateAgent(ctx, a.ID, decode[data.AgentUpdate](t, `{"name":"Renamed"}`)); err != nil {
		t.Fatal(err)
	}
	sealer := env.Store.(interface{ ServiceOptions() service.Options }).ServiceOptions().Sealer
	err = env.Store.View(context.Background(), func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		name, value, _ := data.SplitHeader(row.LLMConfig.Tools[0].CustomFunctionHeaders[0])
		if name != "Authorization" || !seal.IsSealed(value) {
			t.Errorf("after a write the header is stored as %q, want it sealed", row.LLMConfig.Tools[0].CustomFunctionHeaders[0])
			return nil
		}
		if plain, err := sealer.Open(value); err != nil || plain != "Bearer sk_live_abcdefgh1234" {
			t.Errorf("the sealed header opens to %q (%v)", plain, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSealHeadersRacesAgentWrites: the agent is renamed and published while the sealing
// job works through its versions, after it first read the row in the clear. Each of the
// job's writes reads the agent again, so the rename is not lost, and every version ends
// sealed with the row.
func TestSealHeadersRacesAgentWrites(t *testing.T) {
	env := testkit.New(t, nil)
	ctx := owner(t, env, "race@example.com")
	const secret = "Bearer sk_live_abcdefgh1234"
	a := mustAgent(t, ctx, env.Svc.Agents, `{"name":"Racing","llm_config":{"provider":"groq","model":"llama-3.3-70b-versatile",
		"tools":[{"name":"crm","type":"custom_function","http_method":"POST","api_endpoint":"https://crm.example.com/o"}]}}`)
	const stored = 8 * service.RetentionBatch // versions: eight of the job's writes
	err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		tool := *row.LLMConfig.Tools[0]
		tool.CustomFunctionHeaders = []string{"Authorization: " + secret}
		row.LLMConfig.Tools = []*data.Tool{&tool}
		row.JSON, row.LastVersion = nil, stored
		if err := tx.PutAgent(row, row.Status); err != nil {
			return err
		}
		for n := 1; n <= stored; n++ {
			if err := tx.PutAgentVersion(&data.AgentVersion{AgentID: a.ID, VersionNumber: n, Name: row.Name, AgentConfig: row.AgentConfig, CreatedAt: row.CreatedAt}); err != nil {
				return err
			}
		}
		return tx.ListAgentToSeal(row.WorkspaceID, a.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := startSealJob(t, env.Store)
	// Once the job has sealed its first batch of versions (the row read, still clear),
	// rename and publish: the job's later writes must keep both.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v *data.AgentVersion
		if err := env.Store.View(context.Background(), func(tx service.Tx) (err error) {
			v, err = tx.AgentVersion(a.ID, 1)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, value, _ := data.SplitHeader(v.LLMConfig.Tools[0].CustomFunctionHeaders[0]); seal.IsSealed(value) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job sealed nothing in 30 s")
		}
		time.Sleep(100 * time.Microsecond)
	}
	const renamed = "Racing renamed"
	if _, err := svc.Agents.UpdateAgent(ctx, a.ID, decode[data.AgentUpdate](t, `{"name":"`+renamed+`"}`)); err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{Force: true}); err != nil {
		t.Fatal(err)
	}
	for {
		var left []string
		if err := env.Store.View(context.Background(), func(tx service.Tx) (err error) {
			left, err = tx.AgentsToSeal(a.WorkspaceID, 1)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still listed after 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	sealed := func(what string, c data.AgentConfig) {
		t.Helper()
		if _, value, _ := data.SplitHeader(c.LLMConfig.Tools[0].CustomFunctionHeaders[0]); !seal.IsSealed(value) {
			t.Errorf("%s stores its header as %q", what, value)
		}
	}
	err = env.Store.View(context.Background(), func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		if row.Name != renamed || row.LastVersion != stored+1 {
			t.Errorf("after the race: name %q, last_version %d; want %q, %d (a write lost)", row.Name, row.LastVersion, renamed, stored+1)
		}
		sealed("the row", row.AgentConfig)
		for n := 1; n <= row.LastVersion; n++ {
			v, err := tx.AgentVersion(a.ID, n)
			if err != nil || v == nil {
				return fmt.Errorf("version %d: %v, %w", n, v, err)
			}
			sealed(fmt.Sprintf("version %d", n), v.AgentConfig)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSealHeadersResumesAfterACrash: a run killed after it committed its first batch of
// versions leaves them sealed, the rest and the row clear, and the agent listed (each
// batch is its own write, the list its checkpoint). The next run seals the rest and
// leaves the sealed ones byte for byte as they were.
func TestSealHeadersResumesAfterACrash(t *testing.T) {
	env := testkit.New(t, nil)
	ctx := owner(t, env, "resume@example.com")
	a := mustAgent(t, ctx, env.Svc.Agents, `{"name":"Resumed","llm_config":{"provider":"groq","model":"llama-3.3-70b-versatile",
		"tools":[{"name":"crm","type":"custom_function","http_method":"POST","api_endpoint":"https://crm.example.com/o"}]}}`)
	sealer := env.Store.(interface{ ServiceOptions() service.Options }).ServiceOptions().Sealer
	const stored = service.RetentionBatch + 5
	sealedBefore := map[int]string{}
	err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		header := func(value string) data.AgentConfig {
			c := row.AgentConfig
			tool := *c.LLMConfig.Tools[0]
			tool.CustomFunctionHeaders = []string{"Authorization: " + value}
			c.LLMConfig.Tools = []*data.Tool{&tool}
			return c
		}
		for n := 1; n <= stored; n++ {
			value := "Bearer sk_live_abcdefgh1234"
			if n <= service.RetentionBatch { // what the killed run committed
				if value, err = sealer.Seal(value); err != nil {
					return err
				}
				sealedBefore[n] = value
			}
			if err := tx.PutAgentVersion(&data.AgentVersion{AgentID: a.ID, VersionNumber: n, Name: row.Name, AgentConfig: header(value), CreatedAt: row.CreatedAt}); err != nil {
				return err
			}
		}
		row.AgentConfig, row.JSON, row.LastVersion = header("Bearer sk_live_abcdefgh1234"), nil, stored
		if err := tx.PutAgent(row, row.Status); err != nil {
			return err
		}
		return tx.ListAgentToSeal(row.WorkspaceID, a.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	startSealJob(t, env.Store)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		if err := env.Store.View(context.Background(), func(tx service.Tx) (err error) {
			left, err = tx.AgentsToSeal(a.WorkspaceID, 1)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still listed after 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	err = env.Store.View(context.Background(), func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		configs := map[int]data.AgentConfig{0: row.AgentConfig}
		for n := 1; n <= stored; n++ {
			v, err := tx.AgentVersion(a.ID, n)
			if err != nil {
				return err
			}
			configs[n] = v.AgentConfig
		}
		for n, c := range configs {
			_, value, _ := data.SplitHeader(c.LLMConfig.Tools[0].CustomFunctionHeaders[0])
			if plain, err := sealer.Open(value); !seal.IsSealed(value) || err != nil || plain != "Bearer sk_live_abcdefgh1234" {
				t.Errorf("config %d (0: the row) stores %q, opening to %q (%v)", n, value, plain, err)
			}
			if before, ok := sealedBefore[n]; ok && before != value {
				t.Errorf("version %d, sealed by the killed run, was sealed again", n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// startSealJob runs the upgrade's agent.seal_headers job on store, as serve starts it,
// until the test ends, and returns the services it runs in.
func startSealJob(t *testing.T, store service.Store) *service.Services {
	t.Helper()
	svc := testkit.Services(t, store, nil)
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Owner: "upgrade", Kinds: []string{service.JobKindSealHeaders}, Poll: time.Millisecond})
	runner.Start(context.Background())
	t.Cleanup(func() { runner.Stop(context.Background()) })
	return svc
}
