-- The name searches (an agent's name, a number's nickname) compare a copy of the text
-- folded by data.FoldCase, written by voiceapi beside the text, rather than lower(), which
-- folds by the database's locale (under the C locale only ASCII: "ÉLODIE" missed
-- "élodie", which bbolt finds). Existing rows are folded in Go by this migration's
-- backfill (postgres/migrate_fold.go), in its transaction; the columns keep no default,
-- so a write that forgets them fails. No index: a search filters the walk of its scope's
-- index (agents_by_workspace, agents_by_status, numbers_by_workspace...), as before.
ALTER TABLE agents ADD COLUMN name_folded text NOT NULL DEFAULT '';
ALTER TABLE agents ALTER COLUMN name_folded DROP DEFAULT;
ALTER TABLE numbers ADD COLUMN nickname_folded text NOT NULL DEFAULT '';
ALTER TABLE numbers ALTER COLUMN nickname_folded DROP DEFAULT;
