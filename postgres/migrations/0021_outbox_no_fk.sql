-- The outbox's foreign key to events goes: its check on every append read events' primary
-- key index, and SSI locks that read by index page (SIReadLock). Event ids are
-- time-ordered, so every append of every workspace inserts into that index's last leaf
-- page, the page every other append's check had just read: any two appends at once made
-- a read/write conflict each way and one of them failed to serialize (the retries between
-- writers of separate workspaces, docs/performance.md). The event and its outbox entry are
-- inserted in one transaction (AppendEvent), a workspace's deletion removes its entries
-- with its events (deleteWorkspaceEvents), and the dispatcher skips an entry whose event
-- is gone, so nothing relied on the check.
ALTER TABLE outbox DROP CONSTRAINT outbox_event_id_fkey;
