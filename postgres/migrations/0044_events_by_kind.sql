-- Events with a kind (a job.failed's job kind, service.EventKind) are listed by it too, so
-- that a page of a caller who reads some job kinds reads only their job.failed events
-- (service.EventScope.Kind): the failures of the kinds it may not read are never read nor
-- counted against the scan bound, where their number shaped its pages. The service
-- computes an event's kind and inserts it with the event. This backfill states that rule a
-- second time, in SQL, once, for the events stored before: job.failed's data's kind, a
-- member that is not a string naming none. TestMigrationFillsEventKinds holds it to
-- service.EventKind for every event type.
ALTER TABLE events ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT '';
UPDATE events SET kind = data->>'kind'
WHERE type = 'job.failed' AND json_typeof(data) = 'object' AND json_typeof(data->'kind') = 'string';
-- A pair's events are its agent's, type's and kind's ('' for the events without one), so
-- events_by_agent takes the kind before seq: a kind's pair seeks its events alone, and no
-- other index serves a pair, which left the planner free to read every kind's (or every
-- agent's) events of the type and filter them. A type's events of one kind, whatever
-- their agent, are few beside the type's: a partial index of the events with a kind.
CREATE INDEX events_by_agent_kind ON events (workspace_id, agent_id, type, kind, seq);
DROP INDEX events_by_agent;
CREATE INDEX events_by_type_kind ON events (workspace_id, type, kind, seq) WHERE kind <> '';
