-- Tokens by expiry, for the token pass (service/auth_prune.go): it deletes login tokens
-- past their expiry and API keys past a grace after theirs, earliest first, reading only
-- the expired rows. Tokens without an expiry are not in it.
CREATE INDEX api_keys_by_expiry ON api_keys (kind, expires_at) WHERE expires_at IS NOT NULL;
