-- The agent a request kept under an Idempotency-Key acted on, which a replay checks the
-- caller may still see (docs/api.md, Idempotency-Key). NULL for a request about no one
-- agent, and for the responses kept before, which a replay checks as it did then.

ALTER TABLE idempotency_responses ADD COLUMN agent_id text COLLATE "C";
