-- GET /api/v1/conversations lists a workspace's conversations newest first
-- (conversations_by_workspace), or one agent's, or those of the agents a caller is
-- limited to: this index, so that a page reads its own rows, not the workspace's.
CREATE INDEX conversations_by_agent ON conversations (workspace_id, agent_id, id);
