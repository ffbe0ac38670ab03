-- jobs: durable background work (conventions §26, docs/jobs.md). due_at is when a runner
-- may next claim the job: run_at while queued, lease_until while running, null once
-- final; the storage keeps it so that one partial index serves every claim.
CREATE TABLE jobs (
	id             text COLLATE "C" PRIMARY KEY,
	workspace_id   text COLLATE "C" NOT NULL,
	agent_id       text COLLATE "C",
	kind           text COLLATE "C" NOT NULL,
	payload        bytea NOT NULL,
	status         text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
	attempt        integer NOT NULL CHECK (attempt >= 0),
	max_attempts   integer NOT NULL CHECK (max_attempts >= 1),
	run_at         timestamptz NOT NULL,
	due_at         timestamptz,
	lease_owner    text NOT NULL DEFAULT '',
	lease_until    timestamptz,
	last_error     text,
	progress_done  bigint NOT NULL DEFAULT 0,
	progress_total bigint NOT NULL DEFAULT 0,
	checkpoint     text NOT NULL DEFAULT '',
	unique_key     text COLLATE "C",
	created_at     timestamptz NOT NULL,
	started_at     timestamptz,
	finished_at    timestamptz,
	CHECK ((due_at IS NULL) = (status IN ('succeeded', 'failed', 'canceled'))),
	CHECK (status <> 'running' OR lease_until IS NOT NULL)
);
-- Claims walk the due jobs in (due_at, id) order, as bbolt's due keys.
CREATE INDEX jobs_due ON jobs (due_at, id) WHERE due_at IS NOT NULL;
-- One pending job per workspace, kind and unique key; a finished one frees its key.
CREATE UNIQUE INDEX jobs_unique_pending ON jobs (workspace_id, kind, unique_key)
	WHERE unique_key IS NOT NULL AND status IN ('queued', 'running');
CREATE INDEX jobs_by_workspace ON jobs (workspace_id, id);
