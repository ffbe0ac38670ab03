-- A page of the audit log filtered by type or by actor walks that facet's events in
-- chain order through these indexes, where it looked at up to MaxAuditScan events of
-- every kind a page. Events no user caused (actor_user_id '') are never listed by actor.
CREATE INDEX events_by_type ON events (workspace_id, type, seq);
CREATE INDEX events_by_actor ON events (workspace_id, actor_user_id, seq) WHERE actor_user_id <> '';
