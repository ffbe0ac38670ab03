-- The agents whose credential headers (custom_function_headers) the upgrade's job
-- (agent.seal_headers) has yet to seal: stored in the clear before such headers were
-- sealed, in the row or in a published version. Every agent stored now is listed (which
-- of them holds one is the job's to tell); the job takes each off in the write that
-- seals the last of it. Only a move adds to it after.
CREATE TABLE agents_to_seal (
	workspace_id text COLLATE "C" NOT NULL,
	agent_id     text COLLATE "C" NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	PRIMARY KEY (workspace_id, agent_id)
);
CREATE INDEX agents_to_seal_agent ON agents_to_seal (agent_id);
INSERT INTO agents_to_seal (workspace_id, agent_id) SELECT workspace_id, id FROM agents;
