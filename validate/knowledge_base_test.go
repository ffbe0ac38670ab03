package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func TestSourcesAddRules(t *testing.T) {
	threshold, chunks := 0.5, 3
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{"nothing to add", SourcesAdd(data.SourcesAdd{}, nil), []string{"files"}},
		{"good", SourcesAdd(data.SourcesAdd{Texts: []data.TextInput{{Title: "t", Content: "c"}}, URLs: []string{"https://example.com/a"}}, nil), nil},
		{"bad items", SourcesAdd(data.SourcesAdd{
			Texts: []data.TextInput{{Title: strings.Repeat("t", 256), Content: " "}},
			URLs:  []string{"https://example.com/a", "https://example.com/a", "javascript:alert(1)", ""},
			Files: []data.FileUpload{{Filename: "empty.txt"}},
		}, nil), []string{"texts.0.title", "texts.0.content", "urls.1", "urls.2", "urls.3", "files.0"}},
		{"too long content", SourcesAdd(data.SourcesAdd{Texts: []data.TextInput{{Content: strings.Repeat("é", MaxTextContent+1)}}}, nil), []string{"texts.0.content"}},
		{"outbound check", SourcesAdd(data.SourcesAdd{URLs: []string{"https://example.com/"}}, func(string) error { return errTest }), []string{"urls.0"}},
		{"too many", SourcesAdd(data.SourcesAdd{URLs: manyURLs(MaxSourcesPerRequest + 1)}, nil), []string{"files"}},
		{"create needs a name", KnowledgeBaseCreate(data.KnowledgeBaseCreate{Name: " "}, nil), []string{"name"}},
		{"create too many", KnowledgeBaseCreate(data.KnowledgeBaseCreate{Name: "n", URLs: manyURLs(MaxSourcesPerRequest + 1)}, nil), []string{"texts"}},
		{"rename blank", KnowledgeBaseUpdate(data.KnowledgeBaseUpdate{Name: data.Some("")}), []string{"name"}},
		{"rename absent", KnowledgeBaseUpdate(data.KnowledgeBaseUpdate{}), nil},
		{"source type", SourceType("videos"), []string{"source_type"}},
		{"query ok", KnowledgeQuery(data.KnowledgeQuery{Query: "q", ChunksToRetrieve: &chunks, SimilarityThreshold: &threshold}), nil},
		{"query bounds", KnowledgeQuery(data.KnowledgeQuery{Query: strings.Repeat("q", MaxQuery+1), ChunksToRetrieve: ptr(0), SimilarityThreshold: ptr(0.96)}),
			[]string{"query", "chunks_to_retrieve", "similarity_threshold"}},
		{"agent query blank", AgentKnowledgeQuery(data.AgentKnowledgeQuery{Query: "  "}), []string{"query"}},
	}
	for _, c := range cases {
		var got []string
		if c.err != nil {
			got = c.err.(*data.Error).SortedFieldPaths()
		}
		want := append([]string(nil), c.want...)
		sortStrings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: faults %v, want %v", c.name, got, want)
		}
	}
}

type testErr string

func (e testErr) Error() string { return string(e) }

const errTest = testErr("refused")

func manyURLs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "https://example.com/" + strings.Repeat("a", i+1)
	}
	return out
}

func sortStrings(s []string) { slices.Sort(s) }
