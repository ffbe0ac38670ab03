-- Each workspace's active conversations with what makes one expired (its last update and
-- its lease), so that the bound on open conversations (docs/conversations.md "Limits")
-- counts them from this index, never reading every conversation of the workspace. Nothing
-- is rewritten: the index covers the rows as they are.
CREATE INDEX conversations_open ON conversations (workspace_id) INCLUDE (updated_at, lease_until)
	WHERE status = 'active';
