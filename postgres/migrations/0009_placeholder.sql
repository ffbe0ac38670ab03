-- Placeholder, analysis branch only: migration 09 belongs to another branch, which
-- adds its own file. Delete this one when merging: Migrations() needs every number from 1
-- up, and 0013 (post-call analysis) follows it.
SELECT 1;
