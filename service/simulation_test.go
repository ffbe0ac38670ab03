package service_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// The workspace's simulation setting keeps its api_key as an agent keeps its own: masked
// in every answer, sealed in storage (opening to the key), and kept when the mask is sent
// back.
func TestSimulationKeyMaskedAndSealed(t *testing.T) {
	env := testkit.New(t, nil)
	u := env.User(t, "sim@example.com")
	ctx := testkit.As(u)
	const secret = "gsk-simulation-secret-8765"
	key := secret
	in := data.WorkspaceUpdate{Simulation: data.Opt[*data.SimulationModel]{Set: true,
		V: &data.SimulationModel{Provider: data.LLMGroq, Model: "llama-3.3-70b-versatile", APIKey: &key}}}
	check := func(what string, w *data.Workspace) {
		t.Helper()
		if w.Simulation == nil || w.Simulation.APIKey == nil || *w.Simulation.APIKey != "****8765" {
			t.Errorf("%s: simulation %+v, want api_key ****8765", what, w.Simulation)
		}
	}
	w, err := env.Svc.Workspaces.UpdateWorkspace(ctx, u.PersonalWorkspaceID, in)
	if err != nil {
		t.Fatal(err)
	}
	check("update", w)
	mask := "****8765"
	in.Simulation.V.APIKey = &mask
	if w, err = env.Svc.Workspaces.UpdateWorkspace(ctx, u.PersonalWorkspaceID, in); err != nil {
		t.Fatalf("the mask sent back: %v", err)
	}
	check("update with the mask", w)
	if w, err = env.Svc.Workspaces.Workspace(ctx, u.PersonalWorkspaceID); err != nil {
		t.Fatal(err)
	}
	check("show", w)
	err = env.Store.View(ctx, func(tx service.Tx) error {
		rec, err := tx.Workspace(u.PersonalWorkspaceID)
		if err != nil {
			return err
		}
		k := rec.Simulation.APIKey
		if k == nil || strings.Contains(*k, secret) {
			t.Fatalf("storage holds simulation.api_key %v, want it sealed", k)
		}
		if plain, err := env.Store.ServiceOptions().Sealer.Open(*k); err != nil || plain != secret {
			t.Errorf("the stored key opens to %q, %v", plain, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
