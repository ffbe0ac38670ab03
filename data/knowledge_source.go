package data

// KnowledgeSource is a source of a knowledge base as storage keeps it, whatever its type;
// the fields of the other types stay empty. It holds what the record's items lack:
// the owning knowledge base and workspace, and Attempt, the url fetch requests so far
// (a result of an older request is stale).
type KnowledgeSource struct {
	ID              string  `json:"id"`
	Type            string  `json:"type"`
	KnowledgeBaseID string  `json:"knowledge_base_id"`
	WorkspaceID     string  `json:"workspace_id"`
	Title           string  `json:"title,omitempty"`
	Content         string  `json:"content,omitempty"`
	URL             string  `json:"url,omitempty"`
	Attempt         int     `json:"attempt,omitempty"`
	Filename        string  `json:"filename,omitempty"`
	ContentType     string  `json:"content_type,omitempty"`
	SizeBytes       int64   `json:"size_bytes,omitempty"`
	SHA256          string  `json:"sha256,omitempty"`
	Status          string  `json:"status"`
	Error           *string `json:"error"`
	CreatedAt       Time    `json:"created_at"`
	IndexedAt       *Time   `json:"indexed_at"`
	// EmbeddingSpace names the embedding model its chunks' vectors come from ("" when
	// they have none): vectors of another model are not comparable, so retrieval uses a
	// source's vectors only while its space is the workspace's current one.
	EmbeddingSpace string `json:"embedding_space,omitempty"`
}

// SourceChunk is a piece of a source's text as storage keeps it: the text and, when
// embeddings are on, its vector. A chunk is named by its source and its position.
type SourceChunk struct {
	Text   string
	Vector []float32
}

// Heading is what the source is known by: a text's title, a file's name, a url. Retrieval
// weighs its words as a heading of every chunk of the source.
func (s *KnowledgeSource) Heading() string {
	switch s.Type {
	case SourceTexts:
		return s.Title
	case SourceURLs:
		return s.URL
	}
	return s.Filename
}

// AppendTo adds the source's item to the list of its type in kb.
func (s *KnowledgeSource) AppendTo(kb *KnowledgeBase) {
	switch s.Type {
	case SourceTexts:
		kb.Texts = append(kb.Texts, s.Text())
	case SourceURLs:
		kb.URLs = append(kb.URLs, s.URLItem())
	case SourceFiles:
		kb.Files = append(kb.Files, s.File())
	}
}

// Text is a text source's item.
func (s *KnowledgeSource) Text() TextSource {
	return TextSource{ID: s.ID, Title: s.Title, Content: s.Content, CreatedAt: s.CreatedAt}
}

// URLItem is a url source's item.
func (s *KnowledgeSource) URLItem() URLSource {
	return URLSource{ID: s.ID, URL: s.URL, Status: s.Status, Error: s.Error, CreatedAt: s.CreatedAt, IndexedAt: s.IndexedAt}
}

// File is a file source's item.
func (s *KnowledgeSource) File() FileSource {
	return FileSource{ID: s.ID, Filename: s.Filename, ContentType: s.ContentType, SizeBytes: s.SizeBytes,
		SHA256: s.SHA256, Status: s.Status, Error: s.Error, CreatedAt: s.CreatedAt, IndexedAt: s.IndexedAt}
}

// Item is the source as the record shows it, for event payloads.
func (s *KnowledgeSource) Item() any {
	switch s.Type {
	case SourceTexts:
		return s.Text()
	case SourceURLs:
		return s.URLItem()
	}
	return s.File()
}
