package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// DeleteAgentVersion implements data.AgentService: version n goes unless something runs
// on it (versionInUse); history that names it (calls, analysis, test runs) keeps its
// number, and the number is never given again (PublishAgent counts from LastVersion).
func (s *AgentService) DeleteAgentVersion(ctx context.Context, agentID string, n int) error {
	return s.store.Update(ctx, func(tx Tx) error {
		stored, plain, err := s.load(ctx, tx, agentID)
		if err != nil {
			return err
		}
		v, err := tx.AgentVersion(agentID, n)
		if err != nil {
			return err
		}
		if v == nil {
			return data.NotFound("Agent version")
		}
		if v.AgentConfig, err = s.open(v.AgentConfig); err != nil {
			return err
		}
		shown := v.Masked() // as GET …/versions/{n} shows it, and its ETag
		if err := data.CheckIfMatch(data.IfMatch(ctx), &shown); err != nil {
			return err
		}
		if err := s.versionInUse(tx, visibilityOf(data.PrincipalFrom(ctx)), stored, n); err != nil {
			return err
		}
		if err := tx.DeleteAgentVersion(agentID, n); err != nil {
			return err
		}
		// This process's call starts read versions through the cache: drop it there.
		tx.OnCommit(func() { s.versions.drop(agentID, n) })
		_, err = s.record(ctx, tx, data.EventAgentVersionDeleted, plain.WorkspaceID, &shown)
		return err
	})
}

// versionInUse refuses (conflict, saying why) the delete of version n of agent a while
// something reads it live: the published version, a variant of the rollout (whatever its
// weight: the automatic rollback and a PUT move weights without a publish), a call still
// open on it (its deadline and its campaign's lease read the version), an active
// conversation on it (each turn reads it). Numbers and campaigns name no version: they run
// what is live, the first two. The call or conversation is named only when v (the
// caller) may read it: a caller without call history, say, learns that a call runs on
// the version, not which.
func (s *AgentService) versionInUse(tx Tx, v visibility, a *data.StoredAgent, n int) error {
	inUse := func(why string) error {
		return data.Errorf(data.ECONFLICT, "Version %d of the agent is in use: %s.", n, why)
	}
	if a.PublishedVersion != nil && *a.PublishedVersion == n {
		return inUse("it is the published version, which calls run; publish or restore another version first")
	}
	r, err := tx.Rollout(a.ID)
	if err != nil {
		return err
	}
	if r != nil && slices.ContainsFunc(r.Variants, func(v data.RolloutVariant) bool { return v.Version == n }) {
		return inUse(fmt.Sprintf("it is a variant of the agent's rollout; end the rollout (DELETE /api/v1/agents/%s/rollout) or set one without it first", a.ID))
	}
	open, err := tx.OpenCalls(a.WorkspaceID)
	if err != nil {
		return err
	}
	for _, c := range open {
		if c.AgentID == a.ID && c.AgentVersion != nil && *c.AgentVersion == n {
			if !v.record(data.ModuleCallHistory, a.ID) {
				return inUse("a call still runs on it; delete the version once the call has ended")
			}
			return inUse(fmt.Sprintf("call %s still runs on it; delete the version once the call has ended", c.ID))
		}
	}
	id, err := tx.ActiveConversationOn(a.WorkspaceID, a.ID, n)
	if err != nil || id == "" {
		return err
	}
	if !v.conversation(a.ID) {
		return inUse("a conversation still runs on it; delete the version once it has ended")
	}
	return inUse(fmt.Sprintf("conversation %s still runs on it; end it (POST /api/v1/conversations/%s/end) first", id, id))
}

// checkVersionBound refuses a publish that would give agent a more than
// validate.MaxVersionsPerAgent versions. The count is read in the publish's transaction,
// which writes the agent's row: publishes racing for the last place serialize on it
// (bbolt's one writer; PostgreSQL's SERIALIZABLE), so one of them stores.
func checkVersionBound(tx Tx, agentID string) error {
	count, err := tx.AgentVersionCount(agentID, validate.MaxVersionsPerAgent)
	if err != nil || count < validate.MaxVersionsPerAgent {
		return err
	}
	return data.Errorf(data.ECONFLICT, "The agent holds %d versions, the most an agent may hold (%d): delete old versions (DELETE /api/v1/agents/%s/versions/{version_number}) before publishing again.",
		count, validate.MaxVersionsPerAgent, agentID)
}
