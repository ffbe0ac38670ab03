-- Events are listed by the agent they are about ('' for none) and type, so that a page of
-- a caller limited to some agents reads only the events of its agents and those about no
-- agent of the types it may read (service.EventFilter.Scopes): the events of other agents
-- are never read nor counted against the scan bound, where their number shaped its pages.
-- The service computes an event's agent (service.EventAgent) and inserts it with the
-- event. This backfill states that rule a second time, in SQL, once, for the events stored
-- before: an agent's own events name it as data's id, every other event of an agent and
-- job.failed (its job's) as data's agent_id. TestMigrationFillsEventAgents holds it to
-- service.EventAgent for every event type.
ALTER TABLE events ADD COLUMN agent_id text COLLATE "C" NOT NULL DEFAULT '';
-- A member that is not a string (null, a number) names no agent, as in service.EventAgent.
UPDATE events SET agent_id = COALESCE(CASE
		WHEN type IN ('agent.created', 'agent.updated', 'agent.deleted', 'agent.published', 'agent.restored') THEN
			CASE WHEN json_typeof(data->'id') = 'string' THEN data->>'id' END
		WHEN json_typeof(data->'agent_id') = 'string' THEN data->>'agent_id'
	END, '')
WHERE type IN ('agent.created', 'agent.updated', 'agent.deleted', 'agent.published', 'agent.restored',
	'agent.version_deleted', 'agent.published_untested', 'agent.rollout_updated', 'agent.rollout_ended',
	'agent.rollout_rolled_back', 'agent_test.created', 'agent_test.updated', 'agent_test.deleted',
	'test_run.queued', 'test_run.started', 'test_run.progress', 'test_run.completed',
	'call.registered', 'call.started', 'call.ended', 'call.analyzed', 'call.analysis_failed',
	'campaign.created', 'campaign.started', 'campaign.paused', 'campaign.resumed', 'campaign.canceled',
	'campaign.completed', 'campaign.deleted', 'job.failed')
	AND json_typeof(data) = 'object';
CREATE INDEX events_by_agent ON events (workspace_id, agent_id, type, seq);
