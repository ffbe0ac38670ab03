package data

import (
	"context"
	"io"
)

// Source types: the path segment of a source and the member of the record holding it.
const (
	SourceTexts = "texts"
	SourceURLs  = "urls"
	SourceFiles = "files"
)

// SourceTypes lists every source type, in the record's order.
var SourceTypes = []string{SourceTexts, SourceURLs, SourceFiles}

// Source statuses (conventions §8): pending until extracted and indexed, then indexed or
// failed with a reason.
const (
	SourcePending = "pending"
	SourceIndexed = "indexed"
	SourceFailed  = "failed"
)

// KnowledgeBase is a knowledge base record with its sources (conventions §8).
type KnowledgeBase struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Texts       []TextSource `json:"texts"`
	URLs        []URLSource  `json:"urls"`
	Files       []FileSource `json:"files"`
	CreatedAt   Time         `json:"created_at"`
	UpdatedAt   Time         `json:"updated_at"`
	WorkspaceID string       `json:"workspace_id"`
	// Embeddings is where its vectors stand (the service fills it in responses).
	Embeddings *KnowledgeEmbeddings `json:"embeddings,omitempty"`
	// EmbeddingError is the last embedding failure, stored; nil once embedding succeeds.
	EmbeddingError *string `json:"-"`
	// Access is what the caller who read it may do with it (the service decides,
	// fillKnowledgeBaseAccess), answered beside the record, never in it.
	Access Access `json:"-"`
}

// TextSource is an item of a knowledge base's texts. Title is "" when none was given.
type TextSource struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Content   string `json:"content"`
	CreatedAt Time   `json:"created_at"`
}

// URLSource is an item of a knowledge base's urls; Error says why a failed one failed.
type URLSource struct {
	ID        string  `json:"id"`
	URL       string  `json:"url"`
	Status    string  `json:"status"`
	Error     *string `json:"error"`
	CreatedAt Time    `json:"created_at"`
	IndexedAt *Time   `json:"indexed_at"`
}

// FileSource is an item of a knowledge base's files: the original is kept under the data
// directory and can be downloaded again; SHA256 is the hex digest of its bytes.
type FileSource struct {
	ID          string  `json:"id"`
	Filename    string  `json:"filename"`
	ContentType string  `json:"content_type"`
	SizeBytes   int64   `json:"size_bytes"`
	SHA256      string  `json:"sha256"`
	Status      string  `json:"status"`
	Error       *string `json:"error"`
	CreatedAt   Time    `json:"created_at"`
	IndexedAt   *Time   `json:"indexed_at"`
}

// TextInput is a text source as a request gives it.
type TextInput struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

// KnowledgeBaseCreate is the body of POST /api/v1/knowledge-bases.
type KnowledgeBaseCreate struct {
	RecordReadOnly
	Files      ReadOnly    `json:"files,omitzero" strict:"readonly"`
	Embeddings ReadOnly    `json:"embeddings,omitzero" strict:"readonly"`
	Name       string      `json:"name"`
	Texts      []TextInput `json:"texts"`
	URLs       []string    `json:"urls"`
}

// KnowledgeBaseUpdate is the body of PUT /api/v1/knowledge-bases/{knowledge_base_id}: a
// rename. Sources change through their own routes, so the record's are read-only here.
type KnowledgeBaseUpdate struct {
	RecordReadOnly
	Texts      ReadOnly    `json:"texts,omitzero" strict:"readonly"`
	URLs       ReadOnly    `json:"urls,omitzero" strict:"readonly"`
	Files      ReadOnly    `json:"files,omitzero" strict:"readonly"`
	Embeddings ReadOnly    `json:"embeddings,omitzero" strict:"readonly"`
	Name       Opt[string] `json:"name"`
}

// FileUpload is one uploaded file: its client-supplied name and its bytes.
type FileUpload struct {
	Filename string
	Content  []byte
}

// SourcesAdd is what POST /api/v1/knowledge-bases/{knowledge_base_id}/sources/add adds; Files come only
// from multipart parts.
type SourcesAdd struct {
	Texts []TextInput  `json:"texts"`
	URLs  []string     `json:"urls"`
	Files []FileUpload `json:"-"`
}

// KnowledgeQuery is the body of POST /api/v1/knowledge-bases/{knowledge_base_id}/query. Nil fields take
// the defaults: 3 chunks, no threshold.
type KnowledgeQuery struct {
	Query               string   `json:"query"`
	ChunksToRetrieve    *int     `json:"chunks_to_retrieve" strict:"nonnull"`
	SimilarityThreshold *float64 `json:"similarity_threshold"`
}

// AgentKnowledgeQuery is the body of POST /api/v1/agents/{agent_id}/knowledge/query.
type AgentKnowledgeQuery struct {
	Query string `json:"query"`
	// AgentVersion searches with that published version's knowledge settings (the version
	// a call runs, docs/runtime.md) rather than the agent's current ones.
	AgentVersion *int `json:"agent_version" strict:"nonnull"`
}

// KnowledgeChunk is a retrieved chunk with its score in [0, 1] and the evidence that found
// it (EvidenceLexical, EvidenceVector or EvidenceBoth).
type KnowledgeChunk struct {
	ChunkID    string  `json:"chunk_id"`
	SourceID   string  `json:"source_id"`
	SourceType string  `json:"source_type"`
	Text       string  `json:"text"`
	Score      float64 `json:"score"`
	Evidence   string  `json:"evidence"`
}

// What found a retrieved chunk: its words, its embedding, or both.
const (
	EvidenceLexical = "lexical"
	EvidenceVector  = "vector"
	EvidenceBoth    = "both"
)

// URLFetcher fetches the url of a url source (knowledge.Fetcher, through the SSRF guard).
type URLFetcher interface {
	Fetch(ctx context.Context, rawURL string) FetchedURL
}

// URLFetch is a pending url source waiting for the fetcher. Attempt tells one request to
// fetch it from the next, so a result that arrives after a refetch or a delete is dropped.
type URLFetch struct {
	KnowledgeBaseID string
	SourceID        string
	URL             string
	Attempt         int
}

// FetchedURL is what the fetcher got for a url source: the body and the response's
// Content-Type, or Err when the fetch failed (its message becomes the source's error).
type FetchedURL struct {
	Body        []byte
	ContentType string
	Err         error
}

// KnowledgeBaseService manages knowledge bases, their sources and retrieval. Methods act
// in the caller's workspace; a knowledge base of another workspace is not_found.
type KnowledgeBaseService interface {
	// ListKnowledgeBases returns a page of knowledge bases, newest first. Errors:
	// validation_failed (per_page, cursor).
	ListKnowledgeBases(ctx context.Context, p PageRequest) ([]*KnowledgeBase, Page, error)
	// CreateKnowledgeBase creates a knowledge base with optional texts (indexed at once)
	// and urls (pending for the fetcher). Errors: validation_failed, quota_exceeded.
	CreateKnowledgeBase(ctx context.Context, in KnowledgeBaseCreate) (*KnowledgeBase, error)
	// KnowledgeBase returns one knowledge base. Errors: not_found.
	KnowledgeBase(ctx context.Context, id string) (*KnowledgeBase, error)
	// UpdateKnowledgeBase renames a knowledge base. Errors: not_found, validation_failed,
	// precondition_failed (If-Match).
	UpdateKnowledgeBase(ctx context.Context, id string, in KnowledgeBaseUpdate) (*KnowledgeBase, error)
	// DeleteKnowledgeBase removes a knowledge base, its sources, chunks and files, and drops
	// it from every agent's knowledge_base_ids. Errors: not_found, precondition_failed.
	DeleteKnowledgeBase(ctx context.Context, id string) error
	// AddSources stores files (on disk before their metadata commits), texts and urls;
	// files and texts are extracted and indexed before it returns, urls stay pending.
	// Errors: not_found, validation_failed (bad item, unsupported file, too many sources).
	AddSources(ctx context.Context, kbID string, in SourcesAdd) (*KnowledgeBase, error)
	// DeleteSource removes one source with its chunks (and file). Errors: not_found
	// (knowledge base or source), validation_failed (unknown source type).
	DeleteSource(ctx context.Context, kbID, sourceType, sourceID string) (*KnowledgeBase, error)
	// RefetchURL puts a url source back to pending. Errors: not_found.
	RefetchURL(ctx context.Context, kbID, sourceID string) (*KnowledgeBase, error)
	// SourceFile opens the original bytes of a file source; the caller closes them.
	// Errors: not_found.
	SourceFile(ctx context.Context, kbID, sourceID string) (*FileSource, io.ReadSeekCloser, error)
	// QueryKnowledgeBase returns the best chunks for a query, best first. Errors:
	// not_found, validation_failed.
	QueryKnowledgeBase(ctx context.Context, kbID string, q KnowledgeQuery) ([]KnowledgeChunk, error)
	// QueryAgentKnowledge searches an agent's knowledge_base_ids with its
	// knowledge_base_config. Errors: not_found (agent), validation_failed.
	QueryAgentKnowledge(ctx context.Context, agentID string, q AgentKnowledgeQuery) ([]KnowledgeChunk, error)
	// UseURLFetcher sets what fetches url sources (the server builds it from its
	// configuration): the handler of their fetch jobs (knowledge_base.fetch_url) retries
	// later while none is set.
	UseURLFetcher(f URLFetcher)
	// PendingURLs lists url sources waiting to be fetched, in every workspace (with no
	// caller: a runner's start enqueues a fetch job for each that lacks one).
	PendingURLs(ctx context.Context) ([]URLFetch, error)
	// CompleteURL extracts and indexes what the fetcher got, or marks the source failed.
	// A result for a source deleted or refetched meanwhile is dropped without error.
	CompleteURL(ctx context.Context, job URLFetch, got FetchedURL) error
}
