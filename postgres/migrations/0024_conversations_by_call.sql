-- An ended conversation goes with the call it became (docs/conversations.md, "After the
-- end"): a call's delete finds its conversation by call_id through this index, never
-- reading every conversation.
CREATE INDEX conversations_by_call ON conversations (call_id) WHERE call_id IS NOT NULL;

-- The conversations that ended before an ended conversation was redacted with its call:
-- the upgrade's job (conversation.redact_ended) redacts each, or deletes it when its call
-- is gone, and takes it off this list in the same transaction. Nothing adds to it after.
CREATE TABLE conversations_to_redact (
	workspace_id    text COLLATE "C" NOT NULL,
	conversation_id text COLLATE "C" NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	PRIMARY KEY (workspace_id, conversation_id)
);
CREATE INDEX conversations_to_redact_conversation ON conversations_to_redact (conversation_id);
INSERT INTO conversations_to_redact (workspace_id, conversation_id)
	SELECT workspace_id, id FROM conversations WHERE status = 'ended';
