-- The count a window held before the last statement that counted into it: requests are
-- counted in batches (one statement for many requests), and each request's decision
-- depends on the count before its batch, which RETURNING alone cannot give once the
-- count stops at the limit.
ALTER TABLE rate_windows ADD COLUMN prev integer NOT NULL DEFAULT 0;
