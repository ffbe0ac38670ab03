-- Every response kept with an answer for a request that acted on an agent (a call's
-- start or registration, its tests and test runs, an analysis, a backfill, a campaign's
-- create, as well as its conversations' starts and messages), found by the agent: its
-- delete cuts them to their claims, so that nothing of them (a call start's credentials)
-- is kept a day under keys whose replay is 404 (docs/api.md, Idempotency-Key). A claim
-- (status 0) leaves the index, so the batches of a large delete read only what is left.
DROP INDEX idempotency_responses_agent_conversation;
CREATE INDEX idempotency_responses_agent ON idempotency_responses (agent_id) WHERE status <> 0 AND agent_id IS NOT NULL;
