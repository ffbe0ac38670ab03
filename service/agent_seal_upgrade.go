package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/seal"
)

// JobKindSealHeaders is the job kind that seals the credential headers of custom
// functions (data.IsCredentialHeader) an agent row or a published version holds in the
// clear, stored before such headers were sealed (docs/upgrading.md). Storage's upgrade
// lists every agent then stored (AgentTx.AgentsToSeal); every write seals them since, so
// the job runs once per workspace that had agents.
const JobKindSealHeaders = "agent.seal_headers"

// sealHeadersKind is the job kind of that upgrade, run by s.
func (s *AgentService) sealHeadersKind() JobKind {
	return s.listedUpgradeKind(listedUpgrade{name: JobKindSealHeaders, each: s.sealStoredHeaders,
		list: func(tx Tx, ws string, limit int) ([]string, error) { return tx.AgentsToSeal(ws, limit) }}, data.ModuleAgents)
}

// sealStoredHeaders seals the clear credential headers of listed agent id of workspace
// ws: its versions, RetentionBatch of them a write, then, in the write of the last batch,
// the row, and takes it off the list. Each write reads what it rewrites, so a concurrent
// write of the agent is never overwritten, and a version published meanwhile (up to the
// row's last_version as that write reads it) is sealed too.
//
// Sealing is no edit: the agent's ETag and draft revision (from its opened, masked
// configuration) stay, as do updated_at and each version's content; no event is
// recorded and no version made. Only the stored bytes change.
func (s *AgentService) sealStoredHeaders(ctx context.Context, ws, id string) error {
	for next := 1; ; next += RetentionBatch {
		done := false
		err := s.store.Update(ctx, func(tx Tx) error {
			row, err := tx.Agent(id)
			if err != nil {
				return err
			}
			if row == nil || row.WorkspaceID != ws { // deleted meanwhile
				done = true
				return tx.AgentSealed(ws, id)
			}
			last := min(next+RetentionBatch-1, row.LastVersion)
			for n := next; n <= last; n++ {
				v, err := tx.AgentVersion(id, n)
				if err != nil || v == nil {
					if err != nil {
						return err
					}
					continue
				}
				sealed, changed, err := s.sealClearHeaders(v.AgentConfig)
				if err != nil || !changed {
					if err != nil {
						return err
					}
					continue
				}
				v.AgentConfig = sealed
				if err := tx.PutAgentVersion(v); err != nil {
					return err
				}
			}
			if last < row.LastVersion {
				return nil
			}
			done = true
			sealed, changed, err := s.sealClearHeaders(row.AgentConfig)
			if err != nil {
				return err
			}
			if changed {
				row.AgentConfig, row.JSON = sealed, nil // the engine encodes the row, header sealed
				if err := tx.PutAgent(row, row.Status); err != nil {
					return err
				}
			}
			return tx.AgentSealed(ws, id)
		})
		if err != nil || done {
			return err
		}
	}
}

// sealClearHeaders returns c with each credential header stored in the clear sealed,
// and whether there was one; sealed values are kept as they are.
func (s *AgentService) sealClearHeaders(c data.AgentConfig) (data.AgentConfig, bool, error) {
	changed := false
	c, err := data.MapCredentialHeaders(c, func(v string) (string, error) {
		if seal.IsSealed(v) {
			return v, nil
		}
		changed = true
		return s.sealer.Seal(v)
	})
	return c, changed, err
}
