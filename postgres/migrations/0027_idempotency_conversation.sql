-- The conversation a message kept under an Idempotency-Key was sent to: the conversation's
-- end deletes the kept answer, which holds the turn before redaction (docs/conversations.md,
-- "Sending a message again"). NULL for any other request, and for the answers kept before,
-- which expire within a day as they did.

ALTER TABLE idempotency_responses ADD COLUMN conversation_id text COLLATE "C";
CREATE INDEX idempotency_responses_conversation ON idempotency_responses (conversation_id)
	WHERE conversation_id IS NOT NULL;
