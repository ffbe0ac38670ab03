-- The index of an agent's conversations' kept answers (0032) holds only those still to
-- cut (status not 0): a claim leaves it when cut. Each batch of the agent's delete and of
-- its job agent.cut_kept_answers walked every claim the batches before it had cut
-- (docs/performance.md, "An agent's delete").
DROP INDEX idempotency_responses_agent_conversation;
CREATE INDEX idempotency_responses_agent_conversation ON idempotency_responses (agent_id)
	WHERE status <> 0 AND (conversation_id IS NOT NULL OR started_conversation_id IS NOT NULL);
