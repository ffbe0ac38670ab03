-- Embeddings per workspace (issue 31, docs/knowledge-bases.md): the workspace's embedding
-- provider (base_url, model, the masked api_key) with its sealed key; the model a
-- source's vectors come from; a knowledge base's last embedding failure.
ALTER TABLE workspaces ADD COLUMN embeddings jsonb NOT NULL DEFAULT '{}';
ALTER TABLE workspaces ADD COLUMN embeddings_key text NOT NULL DEFAULT '';
ALTER TABLE knowledge_sources ADD COLUMN embedding_space text NOT NULL DEFAULT '';
ALTER TABLE knowledge_bases ADD COLUMN embedding_error text;
