-- Agent tests and their runs (conventions §22), and the workspace's simulation model.

-- The model of simulated callers and judges; NULL: each agent's own model.
ALTER TABLE workspaces ADD COLUMN simulation jsonb;

CREATE TABLE agent_tests (
	id                   text COLLATE "C" PRIMARY KEY,
	workspace_id         text COLLATE "C" NOT NULL,
	agent_id             text COLLATE "C" NOT NULL,
	name                 text NOT NULL,
	caller               jsonb NOT NULL, -- the test's user: a script, or a persona and a goal
	variables            jsonb NOT NULL,
	max_turns            integer NOT NULL CHECK (max_turns BETWEEN 1 AND 50),
	mocks                jsonb NOT NULL,
	criteria             jsonb NOT NULL,
	required_for_publish boolean NOT NULL,
	repeat               integer NOT NULL CHECK (repeat BETWEEN 1 AND 10),
	created_at           timestamptz NOT NULL,
	updated_at           timestamptz NOT NULL
);
CREATE INDEX agent_tests_by_agent ON agent_tests (agent_id, id);
CREATE INDEX agent_tests_by_workspace ON agent_tests (workspace_id);

CREATE TABLE test_runs (
	id            text COLLATE "C" PRIMARY KEY,
	workspace_id  text COLLATE "C" NOT NULL,
	agent_id      text COLLATE "C" NOT NULL,
	agent_version integer CHECK (agent_version >= 1), -- NULL: the draft
	revision      text COLLATE "C",                   -- the draft's ETag; NULL for a version
	status        text NOT NULL CHECK (status IN ('queued', 'running', 'passed', 'failed', 'error')),
	test_ids      jsonb NOT NULL,
	summary       jsonb NOT NULL,
	job_id        text COLLATE "C" NOT NULL,
	error         text,
	created_by    text COLLATE "C" NOT NULL,
	created_at    timestamptz NOT NULL,
	started_at    timestamptz,
	finished_at   timestamptz,
	-- What the run runs, copied when it was asked for: the configuration (api_key
	-- sealed) and the tests.
	config        jsonb NOT NULL,
	tests         jsonb NOT NULL,
	CHECK ((agent_version IS NULL) = (revision IS NOT NULL)),
	CHECK ((status IN ('passed', 'failed', 'error')) = (finished_at IS NOT NULL))
);
CREATE INDEX test_runs_by_agent ON test_runs (agent_id, id);
-- The publish gate reads the runs of the draft's current revision.
CREATE INDEX test_runs_by_revision ON test_runs (agent_id, revision, id) WHERE revision IS NOT NULL;
CREATE INDEX test_runs_by_workspace ON test_runs (workspace_id);

-- A run's results, one per test and repeat, written as each ends.
CREATE TABLE test_run_results (
	run_id  text COLLATE "C" NOT NULL REFERENCES test_runs (id) ON DELETE CASCADE,
	test_id text COLLATE "C" NOT NULL,
	repeat  integer NOT NULL CHECK (repeat BETWEEN 1 AND 10),
	status  text NOT NULL CHECK (status IN ('passed', 'failed', 'error')),
	result  jsonb NOT NULL,
	PRIMARY KEY (run_id, test_id, repeat)
);
