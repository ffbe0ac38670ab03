-- Conversations with agents (conventions §21): the record, and its items apart, numbered
-- in order, so a turn inserts its items instead of rewriting the conversation.
CREATE TABLE conversations (
	id                   text COLLATE "C" PRIMARY KEY,
	workspace_id         text COLLATE "C" NOT NULL,
	agent_id             text COLLATE "C" NOT NULL,
	agent_version        integer CHECK (agent_version >= 1), -- NULL: the draft
	status               text NOT NULL CHECK (status IN ('active', 'ended')),
	variables            jsonb NOT NULL,
	input_tokens         bigint NOT NULL CHECK (input_tokens >= 0),
	output_tokens        bigint NOT NULL CHECK (output_tokens >= 0),
	agent_turns          integer NOT NULL CHECK (agent_turns >= 0),
	disconnection_reason text,
	call_id              text COLLATE "C",
	items                integer NOT NULL CHECK (items >= 0),
	started_by           text COLLATE "C" NOT NULL,
	-- The lease of the message being answered: one at a time, across replicas.
	lease_token          text,
	lease_until          timestamptz,
	created_at           timestamptz NOT NULL,
	updated_at           timestamptz NOT NULL,
	ended_at             timestamptz,
	CHECK ((status = 'ended') = (ended_at IS NOT NULL)),
	CHECK ((lease_token IS NULL) = (lease_until IS NULL))
);
CREATE INDEX conversations_by_workspace ON conversations (workspace_id, id);
-- The idle sweep reads the active conversations least recently updated first.
CREATE INDEX conversations_idle ON conversations (updated_at, id) WHERE status = 'active';

CREATE TABLE conversation_items (
	conversation_id text COLLATE "C" NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	seq             integer NOT NULL CHECK (seq >= 0),
	item            jsonb NOT NULL,
	PRIMARY KEY (conversation_id, seq)
);
