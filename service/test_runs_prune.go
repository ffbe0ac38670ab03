package service

import (
	"github.com/voiceapi/voiceapi/validate"
)

// testRunPruneBatch bounds the runs one finish deletes: an agent that held thousands of
// runs before runs were pruned loses them a batch a finish, never in one long
// transaction; at most one run is past the bound once that backlog is gone.
const testRunPruneBatch = RetentionBatch

// pruneFinishedRuns deletes, in the transaction that finishes one of its runs, the
// agent's finished runs past the newest validate.MaxKeptTestRuns, except those the
// publish gate reads: for each required test, the run whose result decides it on the
// current draft (publishGate's RunID). The gate takes each test's latest result among
// the draft's finished runs, so keeping the run it picked, and any newer one, leaves its
// answer as it was. Runs queued or running are never deleted. Finishing in one write
// transaction, two runs finishing at once keep exactly the bound (bbolt's one writer;
// PostgreSQL's SERIALIZABLE retry, which reads the other's run).
func (s *TestRunService) pruneFinishedRuns(tx Tx, agentID string) error {
	ids, err := tx.FinishedTestRunIDs(agentID)
	if err != nil || len(ids) <= validate.MaxKeptTestRuns {
		return err
	}
	gate, err := s.gateRunIDs(tx, agentID)
	if err != nil {
		return err
	}
	deleted := 0
	for _, id := range ids[validate.MaxKeptTestRuns:] {
		if gate[id] {
			continue
		}
		if deleted == testRunPruneBatch {
			break
		}
		if err := tx.DeleteTestRun(id); err != nil {
			return err
		}
		deleted++
	}
	return nil
}

// gateRunIDs are the runs the publish gate of the agent's current draft reads a result
// from (none when the agent is gone: its runs go with it).
func (s *TestRunService) gateRunIDs(tx Tx, agentID string) (map[string]bool, error) {
	row, err := tx.Agent(agentID)
	if err != nil || row == nil {
		return nil, err
	}
	plain := *row
	if plain.AgentConfig, err = s.agents.open(row.AgentConfig); err != nil {
		return nil, err
	}
	keys, err := s.draftKeysOf(&plain)
	if err != nil {
		return nil, err
	}
	g, err := publishGate(tx, agentID, keys)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, t := range g.Required {
		if t.RunID != nil {
			out[*t.RunID] = true
		}
	}
	return out, nil
}
