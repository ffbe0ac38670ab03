-- Events (the outbox of conventions §11 and the audit chain of §17), webhooks and their
-- deliveries, knowledge bases with their sources, chunks and files.

-- events: one row per recorded event. Ids are time-ordered but minted by each replica's
-- clock, so they are no global order: seq, given by the database at insert, is the order
-- of the chain (ChainEvents, EventsNewestFirst, the audit log's pages). data is json, not
-- jsonb: the chain's hash covers its bytes as recorded (jsonb would reorder its keys).
CREATE TABLE events (
	seq            bigint GENERATED ALWAYS AS IDENTITY,
	id             text COLLATE "C" PRIMARY KEY,
	workspace_id   text COLLATE "C" NOT NULL,
	type           text NOT NULL,
	created_at     timestamptz NOT NULL,
	actor_type     text NOT NULL,
	actor_user_id  text COLLATE "C" NOT NULL,
	actor_token_id bigint NOT NULL,
	actor_address  text NOT NULL,
	data           json,
	prev_hash      text NOT NULL,
	hash           text NOT NULL,
	UNIQUE (seq)
);
CREATE INDEX events_by_workspace ON events (workspace_id, seq);

-- event_heads: the hash of each workspace's newest event. A writer reads its workspace's
-- row FOR UPDATE, so writers of one workspace take turns on the chain.
CREATE TABLE event_heads (
	workspace_id text COLLATE "C" PRIMARY KEY,
	hash         text NOT NULL
);

-- outbox: recorded events not yet fanned out to webhooks, in recording order.
CREATE TABLE outbox (
	seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	event_id text COLLATE "C" NOT NULL UNIQUE REFERENCES events (id) ON DELETE CASCADE
);

-- webhooks: the signing secret is sealed by the service (conventions §9).
CREATE TABLE webhooks (
	id            text COLLATE "C" PRIMARY KEY,
	workspace_id  text COLLATE "C" NOT NULL,
	url           text NOT NULL,
	description   text NOT NULL,
	events        text[] NOT NULL,
	enabled       boolean NOT NULL,
	sealed_secret text NOT NULL,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL
);
CREATE INDEX webhooks_by_workspace ON webhooks (workspace_id, id);

-- deliveries: every attempt's record. A pending one is due at next_attempt_at; the
-- lease columns are for claiming one across replicas (unused until the dispatcher claims).
CREATE TABLE deliveries (
	id              text COLLATE "C" PRIMARY KEY,
	webhook_id      text COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	workspace_id    text COLLATE "C" NOT NULL,
	event_id        text COLLATE "C" NOT NULL,
	event_type      text NOT NULL,
	attempt         integer NOT NULL CHECK (attempt >= 0),
	status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'retrying')),
	response_status integer,
	error           text,
	next_attempt_at timestamptz,
	created_at      timestamptz NOT NULL,
	lease_until     timestamptz,
	leased_by       text
);
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, id);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX deliveries_by_workspace ON deliveries (workspace_id);

-- knowledge_bases: chunks_revision counts the changes of its chunks, so that a replica
-- can tell that the retrieval index it built is stale.
CREATE TABLE knowledge_bases (
	id              text COLLATE "C" PRIMARY KEY,
	workspace_id    text COLLATE "C" NOT NULL,
	name            text NOT NULL,
	created_at      timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL,
	chunks_revision bigint NOT NULL DEFAULT 0
);
CREATE INDEX knowledge_bases_by_workspace ON knowledge_bases (workspace_id, id);

-- knowledge_sources: texts, urls and files, each type's own columns left empty by the
-- others (as the record's fields are).
CREATE TABLE knowledge_sources (
	knowledge_base_id text COLLATE "C" NOT NULL
		REFERENCES knowledge_bases (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
	id                text COLLATE "C" NOT NULL,
	workspace_id      text COLLATE "C" NOT NULL,
	type              text NOT NULL CHECK (type IN ('texts', 'urls', 'files')),
	title             text NOT NULL,
	content           text NOT NULL,
	url               text NOT NULL,
	attempt           integer NOT NULL,
	filename          text NOT NULL,
	content_type      text NOT NULL,
	size_bytes        bigint NOT NULL,
	sha256            text NOT NULL,
	status            text NOT NULL CHECK (status IN ('pending', 'indexed', 'failed')),
	error             text,
	created_at        timestamptz NOT NULL,
	indexed_at        timestamptz,
	PRIMARY KEY (knowledge_base_id, id)
);
CREATE INDEX knowledge_sources_by_workspace ON knowledge_sources (workspace_id);
CREATE INDEX knowledge_sources_pending_urls ON knowledge_sources (knowledge_base_id, id)
	WHERE type = 'urls' AND status = 'pending';

-- knowledge_chunks: a source's text in pieces, in order, with its embedding when
-- embeddings are on. The service builds its retrieval index from them. workspace_id is
-- the knowledge base's ('' for chunks stored before their knowledge base).
CREATE TABLE knowledge_chunks (
	knowledge_base_id text COLLATE "C" NOT NULL,
	source_id         text COLLATE "C" NOT NULL,
	workspace_id      text COLLATE "C" NOT NULL,
	position          integer NOT NULL,
	text              text NOT NULL,
	vector            real[],
	PRIMARY KEY (knowledge_base_id, source_id, position)
);
CREATE INDEX knowledge_chunks_by_workspace ON knowledge_chunks (workspace_id);

-- source_files: the original bytes of file sources, in the database so that every
-- replica serves them. A file is stored before its source row commits, so it has no
-- foreign key; files without a row are swept at start once old enough.
CREATE TABLE source_files (
	workspace_id      text COLLATE "C" NOT NULL,
	knowledge_base_id text COLLATE "C" NOT NULL,
	source_id         text COLLATE "C" NOT NULL,
	content           bytea NOT NULL,
	stored_at         timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (knowledge_base_id, source_id)
);
CREATE INDEX source_files_by_workspace ON source_files (workspace_id);
