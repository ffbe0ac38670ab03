-- Owners and admins are never limited to some agents (conventions §6; docs/upgrading.md).
-- An owner keeps the role and loses the limit (a workspace must keep its owners, and an
-- owner could always lift it); an admin keeps the limit and becomes a developer with every
-- module, so that nobody sees more than before. bbolt does the same
-- (bolt/migrate_members.go). Each changed row takes a new revision, so every replica's
-- cached tokens of these members are read again.
UPDATE members SET agent_ids = '{}', revision = nextval('account_revisions')
	WHERE role = 'owner' AND cardinality(agent_ids) > 0;

UPDATE members SET role = 'developer',
		modules = ARRAY['agents', 'knowledge_base', 'phone_numbers', 'call_history', 'analytics'],
		revision = nextval('account_revisions')
	WHERE role = 'admin' AND cardinality(agent_ids) > 0;
