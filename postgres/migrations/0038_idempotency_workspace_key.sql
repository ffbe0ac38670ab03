-- A member's removal walks the answers its tokens kept in the workspace in key order, each
-- batch from where the last stopped (docs/api.md, Idempotency-Key): 0035's index gains
-- the key, so that the walk seeks there and reads neither the token's answers kept in
-- other workspaces nor, again, those it spares. It serves 0035's reads as before.
DROP INDEX idempotency_responses_workspace;
CREATE INDEX idempotency_responses_workspace ON idempotency_responses (workspace_id, token_id, key) WHERE workspace_id IS NOT NULL;
