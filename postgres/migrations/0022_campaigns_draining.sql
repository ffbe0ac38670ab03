-- A canceled campaign stays among the open campaigns a claim reads while recipients are
-- in progress (the in-progress count of its body's counts), so claims return their
-- leases when they run out (docs/campaigns.md "Leases"); it leaves them in the write
-- that moves the count to 0. The predicate reads the stored body, so a campaign canceled
-- with leases out before this migration is open again at once: nothing is rewritten.
DROP INDEX campaigns_open;
CREATE INDEX campaigns_open ON campaigns (workspace_id)
	WHERE status IN ('scheduled', 'running', 'paused') OR (body #>> '{counts,in_progress}')::bigint > 0;
