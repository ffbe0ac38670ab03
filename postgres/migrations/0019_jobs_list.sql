-- GET /api/v1/jobs (docs/jobs.md, "Finding a job"): a workspace's jobs newest first,
-- narrowed by kind, status or agent. Each filter reads its own index from the cursor's
-- id down, so a page of the failed jobs costs a page's reads however many succeeded.
-- Without a filter the list reads jobs_by_workspace (0010).
CREATE INDEX jobs_by_kind ON jobs (workspace_id, kind, id);
CREATE INDEX jobs_by_status ON jobs (workspace_id, status, id);
CREATE INDEX jobs_by_agent ON jobs (workspace_id, agent_id, id) WHERE agent_id IS NOT NULL;
