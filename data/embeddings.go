package data

// WorkspaceEmbeddings is a workspace's embedding provider: an OpenAI-compatible
// embeddings API (POST {base_url}/embeddings) and the model to ask it for. With base_url
// and model null the workspace uses the operator's default (serve's --embeddings-url),
// if any. APIKey is a credential (conventions §9): stored sealed, shown masked.
// VectorShare is the vector side's share of the hybrid score of every knowledge query of
// the workspace, in [0, 1]; null means knowledge.DefaultFusion's. Enabled false turns
// embeddings off for the workspace, its own provider and the operator's default alike;
// stored, nil is true (records from before the field), and the workspace as shown always
// has it set (Shown).
type WorkspaceEmbeddings struct {
	BaseURL     *string  `json:"base_url"`
	Model       *string  `json:"model"`
	APIKey      *string  `json:"api_key"`
	VectorShare *float64 `json:"vector_share"`
	Enabled     *bool    `json:"enabled" strict:"nonnull"` // absent in a document: true
}

// IsEnabled reports whether the workspace uses an embedding provider at all.
func (e WorkspaceEmbeddings) IsEnabled() bool { return e.Enabled == nil || *e.Enabled }

// Shown is the setting as the API shows it: enabled true or false, never null.
func (e WorkspaceEmbeddings) Shown() WorkspaceEmbeddings {
	on := e.IsEnabled()
	e.Enabled = &on
	return e
}

// Configured reports whether the workspace names its own provider.
func (e WorkspaceEmbeddings) Configured() bool { return e.BaseURL != nil && e.Model != nil }

// WorkspaceEmbeddingsPatch is the embeddings member of a workspace update: each field
// given replaces the stored one, null clears it; an api_key sent back masked keeps the
// stored key.
type WorkspaceEmbeddingsPatch struct {
	BaseURL     Opt[*string]  `json:"base_url"`
	Model       Opt[*string]  `json:"model"`
	APIKey      Opt[*string]  `json:"api_key"`
	VectorShare Opt[*float64] `json:"vector_share"`
	Enabled     Opt[bool]     `json:"enabled" strict:"nonnull"`
}

// Apply returns stored with the patch merged in; the api_key is as given (plain, masked
// or null): the service keeps the stored secret for the masked value.
func (p WorkspaceEmbeddingsPatch) Apply(stored WorkspaceEmbeddings) WorkspaceEmbeddings {
	if p.BaseURL.Set {
		stored.BaseURL = p.BaseURL.V
	}
	if p.Model.Set {
		stored.Model = p.Model.V
	}
	if p.APIKey.Set {
		stored.APIKey = p.APIKey.V
	}
	if p.VectorShare.Set {
		stored.VectorShare = p.VectorShare.V
	}
	if p.Enabled.Set {
		stored.Enabled = nil // true is stored as absent, as before the field existed
		if !p.Enabled.V {
			stored.Enabled = &p.Enabled.V
		}
	}
	return stored
}

// Embedding states of a knowledge base (KnowledgeEmbeddings.Status).
const (
	// EmbeddingsOff: no provider, neither the workspace's nor the operator's.
	EmbeddingsOff = "off"
	// EmbeddingsInProgress: some sources wait for their vectors; they are found
	// lexically meanwhile.
	EmbeddingsInProgress = "embedding"
	// EmbeddingsReady: every indexed source has vectors of the current model.
	EmbeddingsReady = "ready"
	// EmbeddingsFailing: the last attempt to embed failed (Error says why); it is tried
	// again, and the sources are found lexically meanwhile.
	EmbeddingsFailing = "failing"
)

// KnowledgeEmbeddings is where a knowledge base stands with its embeddings: the model
// its vectors come from, how many of its indexed sources have them, and the last failure.
type KnowledgeEmbeddings struct {
	Status   string             `json:"status"`
	Model    *string            `json:"model"`
	Progress EmbeddingsProgress `json:"progress"`
	Error    *string            `json:"error"`
}

// EmbeddingsProgress counts the indexed sources with text (Total) and those embedded
// with the current model (Done).
type EmbeddingsProgress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}
