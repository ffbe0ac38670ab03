-- Rate-limit counts shared by the replicas (per token, per login address and email), one
-- row per key and minute. UNLOGGED: counting writes no WAL, and a crash only forgets the
-- current minute.
CREATE UNLOGGED TABLE rate_windows (
	key          text NOT NULL,
	window_start timestamptz NOT NULL,
	count        integer NOT NULL CHECK (count > 0),
	PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_windows_start ON rate_windows (window_start);
