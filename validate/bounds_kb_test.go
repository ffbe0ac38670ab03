package validate

import (
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
	})
}
