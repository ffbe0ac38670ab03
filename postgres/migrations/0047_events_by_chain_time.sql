-- Time windows of events (an audit page's from and to, a webhook replay) seek to their
-- events. The chain is ordered by seq and created_at is the clock of the replica that
-- recorded the event, which can be behind another's or step back: time is not in chain
-- order. chain_time is the latest created_at of an event and every event before it in its
-- workspace's chain, which never decreases along the chain, so events_by_chain_time
-- lists the chain in order and a time seeks in it; event_heads keeps the newest event's
-- chain_time and the workspace's lag, the most any event's created_at fell behind the
-- chain_time before it. An event created at or after from is at or past the first whose
-- chain_time reaches from; one created before to is before the first whose chain_time
-- reaches to + lag (postgres/events_window.go).
ALTER TABLE events ADD COLUMN chain_time timestamptz;
UPDATE events e SET chain_time = m.chain_time
FROM (SELECT seq, max(created_at) OVER (PARTITION BY workspace_id ORDER BY seq) AS chain_time FROM events) m
WHERE e.seq = m.seq;
ALTER TABLE events ALTER COLUMN chain_time SET NOT NULL;
CREATE INDEX events_by_chain_time ON events (workspace_id, chain_time, seq);
ALTER TABLE event_heads ADD COLUMN chain_time timestamptz, ADD COLUMN lag interval NOT NULL DEFAULT '0';
UPDATE event_heads h SET chain_time = m.chain_time, lag = m.lag
FROM (SELECT workspace_id, max(chain_time) AS chain_time, max(chain_time - created_at) AS lag
	FROM events GROUP BY workspace_id) m
WHERE h.workspace_id = m.workspace_id;
