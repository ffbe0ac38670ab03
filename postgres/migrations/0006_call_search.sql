-- The transcript search index of calls, written in the transaction of each call's write:
-- postings (which calls of a workspace hold a term, and how often) and the number of
-- calls holding each term, which ranks the hits and picks the rarest term of a query.

-- One row per term of a call. The primary key serves "the calls of a workspace holding
-- term t, newest first" (a backward scan of (workspace_id, term, call_id)) and the check
-- that a call holds another term of the query; call_terms_by_call finds the postings a
-- call's new text replaces or its deletion removes.
CREATE TABLE call_terms (
	workspace_id text COLLATE "C" NOT NULL,
	term         text COLLATE "C" NOT NULL CHECK (term <> ''),
	call_id      text COLLATE "C" NOT NULL,
	tf           smallint NOT NULL CHECK (tf BETWEEN 1 AND 255), -- the term's frequency in the call
	PRIMARY KEY (workspace_id, term, call_id)
);
CREATE INDEX call_terms_by_call ON call_terms (call_id);

-- How many calls of the workspace hold each term (rows reaching 0 are removed).
CREATE TABLE call_term_counts (
	workspace_id text COLLATE "C" NOT NULL,
	term         text COLLATE "C" NOT NULL,
	calls        bigint NOT NULL CHECK (calls > 0),
	PRIMARY KEY (workspace_id, term)
);
