package service_test

import (
	"context"
	"slices"
	"testing"

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
