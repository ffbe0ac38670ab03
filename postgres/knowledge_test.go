package postgres_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// toyVector is a deterministic stand-in for an embedding: word hashes folded into 16
// dimensions, so that the hybrid search path runs on stored vectors.
func toyVector(text string) []float32 {
	v := make([]float32, 16)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%16] += 1
	}
	return v
}

// buildIndex builds a knowledge base's retrieval index from a store's chunks, as the
// service does on a first query.
func buildIndex(t *testing.T, s service.Store, kbID string) *knowledge.Index {
	ix := knowledge.NewIndex()
	err := s.View(context.Background(), func(tx service.Tx) error {
		return tx.EachSourceChunks(kbID, func(sourceID string, stored []data.SourceChunk) error {
			chunks := make([]knowledge.Chunk, len(stored))
			for i, sc := range stored {
				chunks[i] = knowledge.Chunk{ID: knowledge.ChunkID(sourceID, i), SourceID: sourceID, Text: sc.Text, Vector: sc.Vector}
			}
			ix.Add(sourceID, chunks)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// The project's recall corpus, chunked and stored in both engines, gives indexes that
// answer every question with the same hits and scores, lexically and hybrid: retrieval on
// PostgreSQL is the bbolt engine's.
func TestKnowledgeRetrievalEqualsBolt(t *testing.T) {
	pg, bo := testkit.OpenPostgres(t, nil), testkit.OpenDB(t, nil)
	const kbID = "kb_01JAAAAAAAAAAAAAAAAAAAAAAA"
	docOf, documents := storeCorpus(t, bo, kbID)
	copySourceChunks(t, pg, bo, kbID)
	pgIx, boIx := buildIndex(t, pg, kbID), buildIndex(t, bo, kbID)
	if pgIx.Len() != boIx.Len() || pgIx.Len() < documents {
		t.Fatalf("index sizes: postgres %d, bbolt %d, for %d documents", pgIx.Len(), boIx.Len(), documents)
	}
	checkSameAnswers(t, pgIx, boIx, docOf)
}

// storeCorpus stores knowledge/testdata's corpus in s, chunked, under kbID. It returns
// the document of each source, and how many documents there are.
func storeCorpus(t *testing.T, s service.Store, kbID string) (map[string]string, int) {
	t.Helper()
	dir := filepath.Join("..", "knowledge", "testdata", "corpus")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := data.NewIDGen()
	docOf := map[string]string{}
	put := func(tx service.Tx) error {
		for _, ent := range entries {
			content, err := os.ReadFile(filepath.Join(dir, ent.Name()))
			if err != nil {
				return err
			}
			kind, err := knowledge.Detect(ent.Name(), content)
			if err != nil {
				return err
			}
			text, err := knowledge.Extract(kind, content)
			if err != nil {
				return err
			}
			src := ids.New(data.PrefixSource)
			docOf[src] = ent.Name()
			chunks, err := knowledge.ChunkSource(src, text)
			if err != nil {
				return err
			}
			stored := make([]data.SourceChunk, len(chunks))
			for i, c := range chunks {
				stored[i] = data.SourceChunk{Text: c.Text, Vector: toyVector(c.Text)}
			}
			if err := tx.PutSourceChunks(kbID, src, stored); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.Update(context.Background(), put); err != nil {
		t.Fatal(err)
	}
	return docOf, len(entries)
}

// copySourceChunks stores in pg exactly what bo holds, source by source.
func copySourceChunks(t *testing.T, pg, bo service.Store, kbID string) {
	t.Helper()
	if err := pg.Update(context.Background(), func(tx service.Tx) error {
		return bo.View(context.Background(), func(btx service.Tx) error {
			return btx.EachSourceChunks(kbID, func(src string, chunks []data.SourceChunk) error {
				return tx.PutSourceChunks(kbID, src, append([]data.SourceChunk(nil), chunks...))
			})
		})
	}); err != nil {
		t.Fatal(err)
	}
}

// checkSameAnswers checks the two indexes answer each question of knowledge/testdata
// alike, lexically and hybrid, with a recall@3 of at least 0.8.
func checkSameAnswers(t *testing.T, pgIx, boIx *knowledge.Index, docOf map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "knowledge", "testdata", "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct{ Question, Document string }
	if err := json.Unmarshal(raw, &qs); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, q := range qs {
		lexPG, lexBo := pgIx.Search(q.Question, 3, 0), boIx.Search(q.Question, 3, 0)
		vec := toyVector(q.Question)
		hybPG, hybBo := pgIx.SearchHybrid(q.Question, vec, 3, 0, knowledge.DefaultFusion), boIx.SearchHybrid(q.Question, vec, 3, 0, knowledge.DefaultFusion)
		if !reflect.DeepEqual(lexPG, lexBo) || !reflect.DeepEqual(hybPG, hybBo) {
			t.Errorf("%q: postgres %v / %v, bbolt %v / %v", q.Question, lexPG, hybPG, lexBo, hybBo)
		}
		for _, h := range lexPG {
			if docOf[h.SourceID] == q.Document {
				found++
				break
			}
		}
	}
	recall := float64(found) / float64(len(qs))
	t.Logf("recall@3 on chunks read back from PostgreSQL = %.3f (%d/%d questions)", recall, found, len(qs))
	if len(qs) < 20 || recall < 0.8 {
		t.Errorf("recall@3 = %.3f over %d questions; want ≥ 0.8", recall, len(qs))
	}
}

// A start removes the files whose source row never committed once they are older than
// the grace period; a young orphan (another replica may be about to commit its row) and
// a file with its row stay.
func TestSourceFileSweepAtStart(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	open := func() *postgres.DB { return testkit.OpenPostgres(t, func(o *postgres.Options) { o.URL = url }) }
	db := open()
	const ws, kb = "ws_01JAAAAAAAAAAAAAAAAAAAAAAA", "kb_01JAAAAAAAAAAAAAAAAAAAAAAA"
	const kept, old, young = "src_01JAAAAAAAAAAAAAAAAAAAAAAA", "src_01JBBBBBBBBBBBBBBBBBBBBBBB", "src_01JCCCCCCCCCCCCCCCCCCCCCCC"
	for _, id := range []string{kept, old, young} {
		if err := db.PutSourceFile(ctx, ws, kb, id, strings.NewReader("bytes of "+id)); err != nil {
			t.Fatal(err)
		}
	}
	err := db.Update(ctx, func(tx service.Tx) error {
		if err := tx.InsertKnowledgeBase(&data.KnowledgeBase{ID: kb, Name: "KB", WorkspaceID: ws}); err != nil {
			return err
		}
		return tx.PutKnowledgeSource(&data.KnowledgeSource{ID: kept, Type: data.SourceFiles, KnowledgeBaseID: kb, WorkspaceID: ws, Status: data.SourceIndexed})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE source_files SET stored_at = $1 WHERE source_id <> $2`, time.Now().Add(-2*time.Hour), young); err != nil {
		t.Fatal(err)
	}
	again := open()
	for id, want := range map[string]bool{kept: true, old: false, young: true} {
		f, err := again.OpenSourceFile(ctx, ws, kb, id)
		if got := err == nil; got != want {
			t.Errorf("file %s present after a start: %v (%v), want %v", id, got, err, want)
		}
		if f != nil {
			f.Close()
		}
	}
}
