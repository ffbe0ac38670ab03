-- Instance-wide values every replica shares: the key that signs pagination cursors and
-- the check value of the secret key credentials are sealed with.
CREATE TABLE meta (
	name  text PRIMARY KEY,
	value bytea NOT NULL
);
