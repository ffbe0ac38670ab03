package validate

import (
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of knowledge base bodies (docs/knowledge-bases.md). The spec gives only the ranges
// of chunks_to_retrieve and similarity_threshold; the others are voiceapi's.
const (
	// MaxSourceTitle bounds a text source's title.
	MaxSourceTitle = 255
	// MaxTextContent bounds a text source's content, in characters: about 400 pages, far
	// beyond a FAQ entry, small enough that a record stays quick to serve.
	MaxTextContent = 1_000_000
	// MaxSourcesPerRequest bounds the texts, urls and files of one request.
	MaxSourcesPerRequest = 100
	// MaxQuery bounds the query of a retrieval.
	MaxQuery = 1000
	// Retrieval ranges (spec: knowledge_base_config).
	MinChunksToRetrieve, MaxChunksToRetrieve = 1, 10
	MinSimilarity, MaxSimilarity             = 0.30, 0.95
)

// KnowledgeBaseCreate checks a new knowledge base: name required, and its optional texts
// and urls as SourcesAdd checks them. checkURL is the outbound URL check (nil: syntax only).
func KnowledgeBaseCreate(in data.KnowledgeBaseCreate, checkURL func(string) error) error {
	var errs Errors
	name(&errs, "name", in.Name)
	if n := len(in.Texts) + len(in.URLs); n > MaxSourcesPerRequest {
		errs.Addf("texts", "One request may add at most %d sources; this one has %d.", MaxSourcesPerRequest, n)
	}
	sources(&errs, in.Texts, in.URLs, checkURL)
	return errs.Err()
}

// KnowledgeBaseUpdate checks a rename.
func KnowledgeBaseUpdate(in data.KnowledgeBaseUpdate) error {
	var errs Errors
	if in.Name.Set {
		name(&errs, "name", in.Name.V)
	}
	return errs.Err()
}

// SourcesAdd checks the sources of one add request: at least one source, at most
// MaxSourcesPerRequest; each text with content (at most MaxTextContent characters) and a
// title of at most MaxSourceTitle; each url absolute http(s), at most MaxURL characters,
// and accepted by checkURL when given. Files are judged by storage, which detects their
// format.
func SourcesAdd(in data.SourcesAdd, checkURL func(string) error) error {
	var errs Errors
	n := len(in.Texts) + len(in.URLs) + len(in.Files)
	if n == 0 {
		errs.Add("files", "Give at least one file, text or url to add.")
	}
	if n > MaxSourcesPerRequest {
		errs.Addf("files", "One request may add at most %d sources; this one has %d.", MaxSourcesPerRequest, n)
	}
	for i, f := range in.Files {
		if len(f.Content) == 0 {
			errs.Addf(Index("files", i), "The %s file is empty.", Index("files", i))
		}
	}
	sources(&errs, in.Texts, in.URLs, checkURL)
	return errs.Err()
}

func sources(errs *Errors, texts []data.TextInput, urls []string, checkURL func(string) error) {
	for i, t := range texts {
		p := Index("texts", i)
		errs.MaxLen(p+".title", t.Title, MaxSourceTitle)
		if strings.TrimSpace(t.Content) == "" {
			errs.NotBlank(p+".content", t.Content)
		} else {
			errs.MaxLen(p+".content", t.Content, MaxTextContent)
		}
	}
	for i, u := range urls {
		p := Index("urls", i)
		if strings.TrimSpace(u) == "" {
			errs.NotBlank(p, u)
			continue
		}
		sourceURL(errs, p, u, checkURL)
	}
	noDuplicates(errs, "urls", urls)
}

// sourceURL applies the syntax check and then, if it passed, the outbound check.
func sourceURL(errs *Errors, path, u string, outbound func(string) error) {
	checkURL(errs, path, u)
	if errs.Has(path) || outbound == nil {
		return
	}
	if err := outbound(u); err != nil {
		errs.Addf(path, "The %s field is not an acceptable URL: %v.", path, err)
	}
}

// SourceType checks a path's source_type.
func SourceType(t string) error {
	var errs Errors
	errs.OneOf("source_type", t, data.SourceTypes...)
	return errs.Err()
}

// KnowledgeQuery checks a retrieval: query required, at most MaxQuery characters;
// chunks_to_retrieve 1 to 10; similarity_threshold 0.30 to 0.95 or null.
func KnowledgeQuery(q data.KnowledgeQuery) error {
	var errs Errors
	query(&errs, q.Query)
	if q.ChunksToRetrieve != nil {
		errs.IntBetween("chunks_to_retrieve", int64(*q.ChunksToRetrieve), MinChunksToRetrieve, MaxChunksToRetrieve)
	}
	if q.SimilarityThreshold != nil {
		errs.FloatBetween("similarity_threshold", *q.SimilarityThreshold, MinSimilarity, MaxSimilarity)
	}
	return errs.Err()
}

// AgentKnowledgeQuery checks an agent's retrieval: the query alone.
func AgentKnowledgeQuery(q data.AgentKnowledgeQuery) error {
	var errs Errors
	query(&errs, q.Query)
	if q.AgentVersion != nil {
		errs.IntMin("agent_version", int64(*q.AgentVersion), 1)
	}
	return errs.Err()
}

func query(errs *Errors, s string) {
	errs.NotBlank("query", s)
	errs.MaxLen("query", s, MaxQuery)
}

// Bounds of a workspace's embedding provider (docs/knowledge-bases.md, "Embeddings").
const (
	MaxEmbeddingModel  = 255
	MaxEmbeddingAPIKey = 4096
	// MinVectorShare and MaxVectorShare bound embeddings.vector_share: 0 lets only the
	// words count, 1 only the vectors.
	MinVectorShare = 0.0
	MaxVectorShare = 1.0
)

// WorkspaceEmbeddings checks a workspace's embedding provider as it will be stored (the
// patch merged in): base_url and model both set or both null; base_url an absolute http(s)
// url of at most MaxURL characters that the outbound check accepts; model at most
// MaxEmbeddingModel characters, not blank; api_key at most MaxEmbeddingAPIKey characters,
// and only with a base_url; vector_share MinVectorShare to MaxVectorShare or null.
func WorkspaceEmbeddings(e data.WorkspaceEmbeddings, outbound func(string) error) error {
	var errs Errors
	switch {
	case e.BaseURL == nil && e.Model != nil:
		errs.RequiredWhen("embeddings.base_url", "embeddings.model is set")
	case e.BaseURL != nil && e.Model == nil:
		errs.RequiredWhen("embeddings.model", "embeddings.base_url is set")
	}
	if e.BaseURL != nil {
		sourceURL(&errs, "embeddings.base_url", *e.BaseURL, outbound)
	}
	if e.Model != nil {
		errs.NotBlank("embeddings.model", *e.Model)
		errs.MaxLen("embeddings.model", *e.Model, MaxEmbeddingModel)
	}
	if e.APIKey != nil {
		errs.MaxLen("embeddings.api_key", *e.APIKey, MaxEmbeddingAPIKey)
		if e.BaseURL == nil {
			errs.Prohibited("embeddings.api_key", "embeddings.base_url is null")
		}
	}
	if e.VectorShare != nil {
		errs.FloatBetween("embeddings.vector_share", *e.VectorShare, MinVectorShare, MaxVectorShare)
	}
	return errs.Err()
}
