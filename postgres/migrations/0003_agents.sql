-- Agents, their published versions, phone numbers, calls, and what is derived from calls
-- in the same transaction as each call's write: hourly rollups for analytics, per-scope
-- counts that pick a list's most selective index, and the minutes of ended calls per
-- month that the call_minutes_per_month quota reads.
--
-- Ids are time-ordered text compared as bytes (COLLATE "C"), so that ORDER BY id is
-- creation order and keyset pages walk the (scope..., id) indexes below.

-- A revision differs for every write of an agent row, across deletes and re-creations
-- too, so that a cache can tell whether what it holds is still the stored agent.
CREATE SEQUENCE agent_revisions;

CREATE TABLE agents (
	id                text COLLATE "C" PRIMARY KEY,
	workspace_id      text COLLATE "C" NOT NULL,
	name              text NOT NULL,
	status            text NOT NULL CHECK (status IN ('draft', 'published')),
	published_version integer,
	last_version      integer NOT NULL DEFAULT 0,
	-- The six configuration groups: call_config, knowledge_base_config, llm_config (its
	-- api_key sealed), prompt_config, stt_config, tts_config.
	config            jsonb NOT NULL,
	privacy           jsonb NOT NULL, -- retention_days and redaction: policy, no part of a version
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL,
	published_at      timestamptz,
	revision          bigint NOT NULL DEFAULT nextval('agent_revisions')
);
CREATE INDEX agents_by_workspace ON agents (workspace_id, id);
CREATE INDEX agents_by_status ON agents (workspace_id, status, id);

-- Versions belong to their agent (an import stores them before the agent row, hence no
-- foreign key); version_key orders them as text for keyset pages.
CREATE TABLE agent_versions (
	agent_id       text COLLATE "C" NOT NULL,
	version_number integer NOT NULL CHECK (version_number > 0),
	version_key    text COLLATE "C" GENERATED ALWAYS AS (lpad(version_number::text, 10, '0')) STORED,
	description    text,
	name           text NOT NULL,
	config         jsonb NOT NULL,
	created_at     timestamptz NOT NULL,
	published_by   text COLLATE "C" NOT NULL,
	PRIMARY KEY (agent_id, version_number)
);
CREATE INDEX agent_versions_page ON agent_versions (agent_id, version_key);

-- A phone number is registered once across every workspace.
CREATE TABLE numbers (
	id                text COLLATE "C" PRIMARY KEY,
	workspace_id      text COLLATE "C" NOT NULL,
	phone_number      text NOT NULL UNIQUE,
	nickname          text NOT NULL,
	provider          text NOT NULL CHECK (provider IN ('twilio', 'telnyx', 'vonage', 'sip')),
	inbound_agent_id  text COLLATE "C",
	outbound_agent_id text COLLATE "C",
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL
);
CREATE INDEX numbers_by_workspace ON numbers (workspace_id, id);
CREATE INDEX numbers_by_inbound_agent ON numbers (workspace_id, inbound_agent_id, id) WHERE inbound_agent_id IS NOT NULL;
CREATE INDEX numbers_by_outbound_agent ON numbers (workspace_id, outbound_agent_id, id) WHERE outbound_agent_id IS NOT NULL;

-- A call's created_at is the time its id carries: a created_at range is an id range.
CREATE TABLE calls (
	id                   text COLLATE "C" PRIMARY KEY,
	workspace_id         text COLLATE "C" NOT NULL,
	agent_id             text COLLATE "C" NOT NULL,
	agent_version        integer,
	number_id            text COLLATE "C",
	direction            text NOT NULL CHECK (direction IN ('inbound', 'outbound', 'web')),
	from_number          text,
	to_number            text,
	status               text NOT NULL CHECK (status IN ('registered', 'ongoing', 'ended', 'failed')),
	started_at           timestamptz,
	ended_at             timestamptz,
	duration_ms          bigint,
	disconnection_reason text,
	transcript           jsonb,
	recording_url        text,
	variables            jsonb,
	analysis             jsonb,
	metadata             jsonb,
	legal_hold           boolean NOT NULL DEFAULT false, -- exempt from retention and deletion while true
	created_at           timestamptz NOT NULL,
	updated_at           timestamptz NOT NULL
);
-- One index per list filter, each ending in id: a page seeks to its cursor and reads
-- per_page rows, at any depth.
CREATE INDEX calls_by_workspace ON calls (workspace_id, id);
CREATE INDEX calls_by_agent ON calls (workspace_id, agent_id, id);
CREATE INDEX calls_by_number ON calls (workspace_id, number_id, id) WHERE number_id IS NOT NULL;
CREATE INDEX calls_by_direction ON calls (workspace_id, direction, id);
CREATE INDEX calls_by_status ON calls (workspace_id, status, id);

-- How many calls each list scope holds: '' (every call of the workspace), 'a/<agent>',
-- 'n/<number>', 'd/<direction>', 's/<status>'. A filtered list walks the smallest scope
-- its filters name and checks the other filters on each row.
CREATE TABLE call_scope_counts (
	workspace_id text COLLATE "C" NOT NULL,
	scope        text COLLATE "C" NOT NULL,
	calls        bigint NOT NULL,
	PRIMARY KEY (workspace_id, scope)
);

-- What the calls created in one UTC hour add up to, per agent and (agent_id '') for the
-- whole workspace: analytics read one row per hour instead of the calls.
CREATE TABLE call_rollups (
	workspace_id  text COLLATE "C" NOT NULL,
	agent_id      text COLLATE "C" NOT NULL,
	hour          timestamptz NOT NULL,
	calls         bigint NOT NULL,
	ended         bigint NOT NULL,
	failed        bigint NOT NULL,
	duration_ms   bigint NOT NULL,
	with_duration bigint NOT NULL,
	reasons       jsonb NOT NULL, -- {"<disconnection_reason>": calls}
	PRIMARY KEY (workspace_id, agent_id, hour)
);

-- The summed duration of the calls that ended in each UTC month. Consumption: deleting a
-- call does not give its minutes back.
CREATE TABLE call_minutes (
	workspace_id text COLLATE "C" NOT NULL,
	month        date NOT NULL, -- the month's first day
	duration_ms  bigint NOT NULL,
	PRIMARY KEY (workspace_id, month)
);

-- call_reasons_add adds two {"reason": count} objects, dropping the reasons that reach 0.
CREATE FUNCTION call_reasons_add(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(jsonb_object_agg(k, n), '{}'::jsonb) FROM (
		SELECT k, sum(n) AS n FROM (
			SELECT key AS k, value::bigint AS n FROM jsonb_each_text(a)
			UNION ALL
			SELECT key, value::bigint FROM jsonb_each_text(b)
		) parts GROUP BY k HAVING sum(n) <> 0
	) sums
$$;
