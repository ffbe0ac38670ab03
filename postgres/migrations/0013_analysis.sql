-- Post-call analysis and cost (docs/analysis.md): where a call's analysis came from, its
-- usage and cost, the workspace's price table, each call's analysis values and the
-- per-field hourly rollups built from them in the same transaction as the call's write.
-- Rows written before read as before: the new call columns are NULL (no analysis source,
-- no usage, no cost) and the rollups' cost members are empty.

ALTER TABLE calls
	ADD COLUMN analysis_source text,
	ADD COLUMN analyzed_at     timestamptz,
	ADD COLUMN analysis_error  jsonb,
	ADD COLUMN usage           jsonb,
	ADD COLUMN cost            jsonb;

-- {"<currency>": micro-units} and {"<version> <currency>": micro-units}.
ALTER TABLE call_rollups
	ADD COLUMN cost         jsonb NOT NULL DEFAULT '{}',
	ADD COLUMN version_cost jsonb NOT NULL DEFAULT '{}';

CREATE TABLE price_tables (
	workspace_id text COLLATE "C" PRIMARY KEY,
	currency     text NOT NULL,
	prices       jsonb NOT NULL, -- [{provider, model, unit, price}]
	updated_at   timestamptz NOT NULL
);

-- A call's analysis values (data.AnalysisValues), keyed by the call; the index serves
-- the partial hours at the edges of a figures range (an agent's calls in id order).
CREATE TABLE call_analysis_values (
	call_id      text COLLATE "C" PRIMARY KEY,
	workspace_id text COLLATE "C" NOT NULL,
	agent_id     text COLLATE "C" NOT NULL,
	vals         jsonb NOT NULL
);
CREATE INDEX call_analysis_values_by_agent ON call_analysis_values (workspace_id, agent_id, call_id);

-- What one field's values add up to in one UTC hour, per agent version (0: none): the
-- figures read one row per hour and version instead of the calls.
CREATE TABLE call_field_rollups (
	workspace_id text COLLATE "C" NOT NULL,
	agent_id     text COLLATE "C" NOT NULL,
	field        text COLLATE "C" NOT NULL,
	hour         timestamptz NOT NULL,
	version      integer NOT NULL,
	calls        bigint NOT NULL,           -- calls with a value for the field
	vals         jsonb NOT NULL,            -- {"<enum or boolean value>": calls}
	numbers      bigint NOT NULL,           -- number values
	sum          double precision NOT NULL, -- their sum
	sketch       jsonb NOT NULL,            -- {"<sketch bucket>": values} (data.SketchKey)
	PRIMARY KEY (workspace_id, agent_id, field, hour, version)
);
