-- The responses kept for the requests to an agent's conversations (starts and messages),
-- found by the agent: its delete cuts them to their claims, so that its conversations'
-- variables, openings and turns are not kept a day under keys whose replay is 404
-- (docs/conversations.md, "After the end").
CREATE INDEX idempotency_responses_agent_conversation ON idempotency_responses (agent_id)
	WHERE conversation_id IS NOT NULL OR started_conversation_id IS NOT NULL;
