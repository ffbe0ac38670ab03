-- A job asked to hurry while it runs (a knowledge query found the embeddings provider
-- answering while the job's attempt still waited on it) keeps when it was asked: the retry
-- that attempt queues is due then, not after its backoff (service.JobTx.HastenJob). Null
-- on every job but a running one so asked; claims and outcomes clear it.
ALTER TABLE jobs ADD COLUMN hasten_to timestamptz;
