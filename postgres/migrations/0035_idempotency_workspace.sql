-- The workspace a kept response's request acted in (a path's {workspace_id}, else its
-- token's), claims too: the workspace's delete, and a member's removal from it (the
-- member's tokens' alone, by token_id), take the responses kept for requests made in it
-- under any token, in batches (docs/api.md, Idempotency-Key). Responses kept before
-- name none, are not indexed, and expire within the day (docs/upgrading.md).
ALTER TABLE idempotency_responses ADD COLUMN workspace_id text COLLATE "C";
CREATE INDEX idempotency_responses_workspace ON idempotency_responses (workspace_id, token_id) WHERE workspace_id IS NOT NULL;
