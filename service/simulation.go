package service

import (
	"context"
	"fmt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// The workspace's simulation setting (conventions §22): the model of agent tests'
// simulated callers and judges. Its api_key is sealed at rest and masked in every
// answer, as an agent's is.

// simulation returns the model that plays a run's callers and judges, api_key opened:
// the workspace's setting, else the agent's own model (agentLLM, opened).
func (b *base) simulation(ctx context.Context, workspaceID string, agentLLM data.LLMConfig) (data.SimulationModel, error) {
	var w *data.WorkspaceRecord
	if err := b.store.View(ctx, func(tx Tx) (err error) {
		w, err = tx.Workspace(workspaceID)
		return err
	}); err != nil {
		return data.SimulationModel{}, err
	}
	if w == nil || w.Simulation == nil {
		return data.SimulationOf(agentLLM), nil
	}
	m := *w.Simulation
	if m.APIKey != nil {
		plain, err := b.sealer.Open(*m.APIKey)
		if err != nil {
			return m, fmt.Errorf("opening simulation.api_key: %w", err)
		}
		m.APIKey = &plain
	}
	return m, nil
}

// mergeSimulation is the setting a workspace update stores: nil, or given with its api_key
// sealed; a key sent back in its masked form keeps the stored key when it masks to it.
func (b *base) mergeSimulation(stored, given *data.SimulationModel) (*data.SimulationModel, error) {
	if given == nil {
		return nil, nil
	}
	next := *given
	if next.APIKey == nil {
		return &next, nil
	}
	if data.IsMaskedSecret(*next.APIKey) {
		if stored != nil && stored.APIKey != nil {
			plain, err := b.sealer.Open(*stored.APIKey)
			if err != nil {
				return nil, fmt.Errorf("opening simulation.api_key: %w", err)
			}
			if data.MaskSecret(plain) == *next.APIKey {
				errs := &validate.Errors{}
				validate.KeptCredentialMoved(errs, "simulation.api_key", true,
					llmAddress(stored.LLMConfig()), llmAddress(next.LLMConfig()))
				if err := errs.Err(); err != nil {
					return nil, err
				}
				next.APIKey = stored.APIKey
				return &next, nil
			}
		}
		return nil, data.FieldError("simulation.api_key", "The simulation.api_key field is a masked key that matches no stored key: send the key itself, or null.")
	}
	sealed, err := b.sealer.Seal(*next.APIKey)
	if err != nil {
		return nil, err
	}
	next.APIKey = &sealed
	return &next, nil
}

// publicWorkspace is a stored workspace as answers show it: its simulation api_key masked.
func (b *base) publicWorkspace(w *data.WorkspaceRecord) (*data.Workspace, error) {
	out := w.Workspace
	out.Embeddings = out.Embeddings.Shown()
	if out.Simulation == nil || out.Simulation.APIKey == nil {
		return &out, nil
	}
	plain, err := b.sealer.Open(*out.Simulation.APIKey)
	if err != nil {
		return nil, fmt.Errorf("opening simulation.api_key: %w", err)
	}
	m := *out.Simulation
	m.APIKey = &plain
	m = m.Masked()
	out.Simulation = &m
	return &out, nil
}
