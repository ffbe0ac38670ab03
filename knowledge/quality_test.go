package knowledge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

type question struct {
	Question string `json:"question"`
	Document string `json:"document"`
	Phrase   string `json:"phrase"`
}

// loadCorpus runs every corpus document through the whole pipeline (Detect, Extract,
// ChunkText, Add), as the storage layer will, with chunks small enough that most documents
// give several.
func loadCorpus(t testing.TB) *Index {
	t.Helper()
	paths, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(paths) < 20 {
		t.Fatalf("corpus: %d documents, err %v; want 20+", len(paths), err)
	}
	ix := NewIndex()
	for _, p := range paths {
		content, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		kind, err := Detect(name, content)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text, err := Extract(kind, content)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var chunks []Chunk
		for i, c := range ChunkText(text, ChunkOptions{Size: 300, Overlap: 60}) {
			chunks = append(chunks, Chunk{ID: fmt.Sprintf("%s#%02d", name, i), Text: c})
		}
		ix.Add(name, chunks)
	}
	return ix
}

func loadQuestions(t testing.TB) []question {
	t.Helper()
	b, err := os.ReadFile("testdata/questions.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []question
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	if len(qs) < 20 {
		t.Fatalf("%d questions, want 20+", len(qs))
	}
	return qs
}

// TestRecallAt3 is the quality bar of issue 4: the document answering a question must be among
// the top three hits for at least 80% of the fixture questions.
func TestRecallAt3(t *testing.T) {
	ix := loadCorpus(t)
	qs := loadQuestions(t)
	found, phrase := 0, 0
	var rightScores []float64
	for _, q := range qs {
		if _, err := os.Stat(filepath.Join("testdata/corpus", q.Document)); err != nil {
			t.Fatalf("question %q names a missing document: %v", q.Question, err)
		}
		hits := ix.Search(q.Question, 3, 0)
		ok := false
		for _, h := range hits {
			if h.SourceID == q.Document {
				ok = true
				rightScores = append(rightScores, h.Score)
				if strings.Contains(h.Text, q.Phrase) {
					phrase++
				}
				break
			}
		}
		if ok {
			found++
		} else {
			t.Logf("miss: %q → %v", q.Question, sourcesOf(hits))
		}
	}
	recall := float64(found) / float64(len(qs))
	sort.Float64s(rightScores)
	t.Logf("recall@3 = %.3f (%d/%d); answering chunk contains the phrase in %d; median score of the answering hit %.2f",
		recall, found, len(qs), phrase, rightScores[len(rightScores)/2])
	if recall < 0.8 {
		t.Errorf("recall@3 = %.3f, want ≥ 0.8", recall)
	}
}

// TestScoreCalibration checks that normalized scores are meaningful for a threshold between
// 0.30 and 0.95: answering chunks score well above 0.3, off-topic questions well below.
func TestScoreCalibration(t *testing.T) {
	ix := loadCorpus(t)
	above := 0
	qs := loadQuestions(t)
	for _, q := range qs {
		hits := ix.Search(q.Question, 1, 0)
		if len(hits) > 0 && hits[0].SourceID == q.Document && hits[0].Score >= 0.5 {
			above++
		}
	}
	if above*10 < len(qs)*7 {
		t.Errorf("only %d/%d questions have their answer on top with a score ≥ 0.5", above, len(qs))
	}
	for _, q := range []string{
		"What is the capital of Mongolia?",
		"Explain quantum entanglement to me",
		"Who won the football world cup?",
		"Recommend a good science fiction novel",
	} {
		hits := ix.Search(q, 3, 0)
		if len(hits) > 0 {
			t.Logf("off-topic %q: best %.2f", q, hits[0].Score)
		}
		if len(hits) > 0 && hits[0].Score >= 0.3 {
			t.Errorf("off-topic %q scored %.2f on %s", q, hits[0].Score, hits[0].ChunkID)
		}
	}
}

func sourcesOf(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s(%.2f)", h.ChunkID, h.Score))
	}
	return out
}
