-- The responses kept with status 201 before a start's answer named its conversation
-- (0030), listed under their token's workspace for the job that tells which are a
-- conversation's start (their bodies are sealed) and notes them with it, redacting the
-- answer when the conversation already ended (idempotency.note_starts). The job takes
-- each off; nothing adds to it after. A response whose token is gone is not listed: no
-- one can replay it.
CREATE TABLE idempotency_starts_to_note (
	workspace_id text COLLATE "C" NOT NULL,
	token_id     bigint NOT NULL,
	key          bytea NOT NULL,
	PRIMARY KEY (workspace_id, token_id, key)
);
INSERT INTO idempotency_starts_to_note (workspace_id, token_id, key)
	SELECT k.workspace_id, r.token_id, r.key FROM idempotency_responses r JOIN api_keys k ON k.id = r.token_id
	WHERE r.status = 201 AND r.conversation_id IS NULL AND r.started_conversation_id IS NULL;
