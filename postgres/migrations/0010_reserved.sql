-- Placeholder: version 0010 is taken by a migration on another branch (jobs, postgres write
-- paths). This branch keeps the sequence contiguous with it; the merge drops this file.
SELECT 1;
