-- The conversation a start kept under an Idempotency-Key made: the conversation's end
-- redacts the kept answer under the setting in force then, as it redacts the conversation
-- (docs/conversations.md, "After the end"). NULL for any other request, and for the
-- answers kept before, which expire within a day as they did.

ALTER TABLE idempotency_responses ADD COLUMN started_conversation_id text COLLATE "C";
CREATE INDEX idempotency_responses_started_conversation ON idempotency_responses (started_conversation_id)
	WHERE started_conversation_id IS NOT NULL;
