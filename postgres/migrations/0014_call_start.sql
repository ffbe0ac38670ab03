-- The call-start contract (conventions §23, docs/runtime.md).

-- A number's variables fill the {{name}} references of the calls it routes.
ALTER TABLE numbers ADD COLUMN variables jsonb NOT NULL DEFAULT '{}';

-- An agent's bound on its open calls: policy, no part of a version; NULL is no bound.
ALTER TABLE agents ADD COLUMN max_concurrent_calls integer CHECK (max_concurrent_calls >= 1);

-- The open calls of a workspace, which a call start counts: registered or ongoing calls
-- only, so the index stays as small as the calls in progress.
CREATE INDEX calls_open ON calls (workspace_id) INCLUDE (agent_id, agent_version, started_at, created_at)
	WHERE status IN ('registered', 'ongoing');

-- At most one rollout per agent: its variants, rollback and figures (data.Rollout).
CREATE TABLE agent_rollouts (
	agent_id     text COLLATE "C" PRIMARY KEY,
	workspace_id text COLLATE "C" NOT NULL,
	body         jsonb NOT NULL
);
CREATE INDEX agent_rollouts_by_workspace ON agent_rollouts (workspace_id);

-- An agent's hourly rollups count per agent_version too (data/call_rollup_versions.go):
-- analytics split by version. Calls stored before count in the totals only.
ALTER TABLE call_rollups ADD COLUMN versions jsonb NOT NULL DEFAULT '{}';
