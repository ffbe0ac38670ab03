package validate

import (
	"errors"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func TestKnowledgeBaseBounds(t *testing.T) {
	text := func(title, content string) error {
		return SourcesAdd(data.SourcesAdd{Texts: []data.TextInput{{Title: title, Content: content}}}, nil)
	}
	query := func(change func(*data.KnowledgeQuery)) error {
		q := data.KnowledgeQuery{Query: "opening hours"}
		change(&q)
		return KnowledgeQuery(q)
	}
	threshold := func(v, step float64, past bool) *float64 {
		if past {
			v += step
		}
		return &v
	}
	baseURL := "https://embeddings.example.com/v1"
	embeddings := func(model, key *string) error {
		return WorkspaceEmbeddings(data.WorkspaceEmbeddings{BaseURL: &baseURL, Model: model, APIKey: key}, nil)
	}
	checkBounds(t, []bound{
		{"MaxNameLen", "name", func(past bool) error {
			return KnowledgeBaseCreate(data.KnowledgeBaseCreate{Name: chars(upTo(MaxNameLen, past))}, nil)
		}},
		{"MaxNameLen rename", "name", func(past bool) error {
			return KnowledgeBaseUpdate(data.KnowledgeBaseUpdate{Name: data.Some(chars(upTo(MaxNameLen, past)))})
		}},
		{"MaxSourceTitle", "texts.0.title", func(past bool) error {
			return text(chars(upTo(MaxSourceTitle, past)), "We open at nine.")
		}},
		{"MaxSourceTitle create", "texts.0.title", func(past bool) error {
			return KnowledgeBaseCreate(data.KnowledgeBaseCreate{Name: "FAQ",
				Texts: []data.TextInput{{Title: chars(upTo(MaxSourceTitle, past)), Content: "We open at nine."}}}, nil)
		}},
		{"MaxTextContent", "texts.0.content", func(past bool) error {
			return text("Hours", chars(upTo(MaxTextContent, past)))
		}},
		{"MaxQuery", "query", func(past bool) error {
			return query(func(q *data.KnowledgeQuery) { q.Query = chars(upTo(MaxQuery, past)) })
		}},
		{"MaxQuery agent", "query", func(past bool) error {
			return AgentKnowledgeQuery(data.AgentKnowledgeQuery{Query: chars(upTo(MaxQuery, past))})
		}},
		{"MinChunksToRetrieve", "chunks_to_retrieve", func(past bool) error {
			return query(func(q *data.KnowledgeQuery) { q.ChunksToRetrieve = ptr(downTo(MinChunksToRetrieve, past)) })
		}},
		{"MaxChunksToRetrieve", "chunks_to_retrieve", func(past bool) error {
			return query(func(q *data.KnowledgeQuery) { q.ChunksToRetrieve = ptr(upTo(MaxChunksToRetrieve, past)) })
		}},
		{"MinSimilarity", "similarity_threshold", func(past bool) error {
			return query(func(q *data.KnowledgeQuery) { q.SimilarityThreshold = threshold(MinSimilarity, -floatStep, past) })
		}},
		{"MaxSimilarity", "similarity_threshold", func(past bool) error {
			return query(func(q *data.KnowledgeQuery) { q.SimilarityThreshold = threshold(MaxSimilarity, floatStep, past) })
		}},
		{"MaxEmbeddingModel", "embeddings.model", func(past bool) error {
			return embeddings(ptr(chars(upTo(MaxEmbeddingModel, past))), nil)
		}},
		{"MaxEmbeddingAPIKey", "embeddings.api_key", func(past bool) error {
			return embeddings(ptr("text-embedding-3-small"), ptr(chars(upTo(MaxEmbeddingAPIKey, past))))
		}},
		{"MinVectorShare", "embeddings.vector_share", func(past bool) error {
			return WorkspaceEmbeddings(data.WorkspaceEmbeddings{VectorShare: threshold(MinVectorShare, -floatStep, past)}, nil)
		}},
		{"MaxVectorShare", "embeddings.vector_share", func(past bool) error {
			return WorkspaceEmbeddings(data.WorkspaceEmbeddings{VectorShare: threshold(MaxVectorShare, floatStep, past)}, nil)
		}},
	})
}

// TestWorkspaceEmbeddingsVectorShare checks vector_share at its bounds and a ten-thousandth
// past them, with and without a provider of the workspace's own (the share applies to the
// operator's default provider too).
func TestWorkspaceEmbeddingsVectorShare(t *testing.T) {
	baseURL, model := "https://embeddings.example.com/v1", "text-embedding-3-small"
	for _, tc := range []struct {
		name  string
		share *float64
		ok    bool
	}{
		{"null", nil, true},
		{"just below 0", ptr(-0.0001), false},
		{"0", ptr(0.0), true},
		{"0.5", ptr(0.5), true},
		{"1", ptr(1.0), true},
		{"just above 1", ptr(1.0001), false},
	} {
		for _, own := range []bool{false, true} {
			e := data.WorkspaceEmbeddings{VectorShare: tc.share}
			if own {
				e.BaseURL, e.Model = &baseURL, &model
			}
			err := WorkspaceEmbeddings(e, nil)
			if tc.ok {
				if err != nil {
					t.Errorf("%s (own provider %v): %v", tc.name, own, err)
				}
				continue
			}
			var fault *data.Error
			if !errors.As(err, &fault) || len(fault.Fields) != 1 || len(fault.Fields["embeddings.vector_share"]) == 0 {
				t.Errorf("%s (own provider %v): got %v, want an error on embeddings.vector_share", tc.name, own, err)
			}
		}
	}
}
