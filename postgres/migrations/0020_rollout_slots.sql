-- A rollout's slot map (data.StoredRollout.Slots): slot i sends its callers to version
-- slots[i], 100 slots. NULL for a rollout stored before, which reads as its variants'
-- consecutive slots in list order, as they were laid out then; the next write stores
-- it. A column of its own, not a member of body: a binary without the map rewrites body
-- alone (its figures), so the map stays while replicas are upgraded one by one.
ALTER TABLE agent_rollouts ADD COLUMN slots integer[];
