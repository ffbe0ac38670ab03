package storetest

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testKnowledgeEmbeddings: what embeddings per workspace store round-trips on every
// engine: a workspace's provider and sealed key, a source's embedding space, a knowledge
// base's last embedding error, a knowledge base's sources as rows and one source's chunks.
func testKnowledgeEmbeddings(t *testing.T, open Opener) {
	s := open(t)
	url, model, mask := "https://embed.example/v1", "small", "****cdef"
	ws := &data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "One",
		Embeddings: data.WorkspaceEmbeddings{BaseURL: &url, Model: &model, APIKey: &mask}}, EmbeddingsKey: "sealed:abc"}
	failure := "the provider answered 503"
	kb := &data.KnowledgeBase{ID: kbOne, Name: "One", WorkspaceID: "ws_1", EmbeddingError: &failure}
	a := &data.KnowledgeSource{ID: srcText, Type: data.SourceTexts, KnowledgeBaseID: kbOne, WorkspaceID: "ws_1", Content: "x",
		Status: data.SourceIndexed, EmbeddingSpace: "space-1"}
	b := &data.KnowledgeSource{ID: srcURL, Type: data.SourceURLs, KnowledgeBaseID: kbOne, WorkspaceID: "ws_1", URL: "https://x.example/",
		Status: data.SourceIndexed}
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWorkspace(ws); err != nil {
			return err
		}
		if err := tx.InsertKnowledgeBase(kb); err != nil {
			return err
		}
		for _, src := range []*data.KnowledgeSource{a, b} {
			if err := tx.PutKnowledgeSource(src); err != nil {
				return err
			}
		}
		return tx.PutSourceChunks(kbOne, srcText, []data.SourceChunk{{Text: "c0", Vector: []float32{1, 0}}, {Text: "c1", Vector: []float32{0, 1}}})
	})
	checkEmbeddingsStored(t, s, url, model, mask, failure)
	checkSourceSpacesAndChunks(t, s)
	checkEmbeddingsCleared(t, s, ws, kb)
}

// checkEmbeddingsStored checks the workspace's provider (url, model, masked key, sealed
// key) and the knowledge base's embedding error read back.
func checkEmbeddingsStored(t *testing.T, s service.Store, url, model, mask, failure string) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		w, err := tx.Workspace("ws_1")
		if err != nil {
			return err
		}
		if e := w.Embeddings; !e.Configured() || *e.BaseURL != url || *e.Model != model || e.APIKey == nil || *e.APIKey != mask || w.EmbeddingsKey != "sealed:abc" {
			t.Errorf("workspace embeddings %+v, key %q", w.Embeddings, w.EmbeddingsKey)
		}
		got, err := tx.KnowledgeBase(kbOne)
		if err != nil {
			return err
		}
		if got.EmbeddingError == nil || *got.EmbeddingError != failure {
			t.Errorf("embedding error %v, want %q", got.EmbeddingError, failure)
		}
		return nil
	})
}

// checkSourceSpacesAndChunks checks the sources read back in id order with their
// embedding spaces, and their chunks with vectors.
func checkSourceSpacesAndChunks(t *testing.T, s service.Store) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		rows, err := tx.KnowledgeSources(kbOne)
		if err != nil {
			return err
		}
		if len(rows) != 2 || rows[0].ID > rows[1].ID {
			t.Fatalf("sources %v, want both in id order", rows)
		}
		for _, r := range rows {
			if want := map[string]string{srcText: "space-1", srcURL: ""}[r.ID]; r.EmbeddingSpace != want {
				t.Errorf("source %s space %q, want %q", r.ID, r.EmbeddingSpace, want)
			}
		}
		chunks, err := tx.SourceChunks(kbOne, srcText)
		if err != nil {
			return err
		}
		if len(chunks) != 2 || chunks[1].Text != "c1" || !slices.Equal(chunks[1].Vector, []float32{0, 1}) {
			t.Errorf("source chunks %+v", chunks)
		}
		if none, err := tx.SourceChunks(kbOne, srcURL); err != nil || len(none) != 0 {
			t.Errorf("chunks of a source without any: %v, %v", none, err)
		}
		return nil
	})
}

// checkEmbeddingsCleared clears the provider, its key and the error, and checks none is
// left.
func checkEmbeddingsCleared(t *testing.T, s service.Store, ws *data.WorkspaceRecord, kb *data.KnowledgeBase) {
	t.Helper()
	ws.Embeddings, ws.EmbeddingsKey, kb.EmbeddingError = data.WorkspaceEmbeddings{}, "", nil
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWorkspace(ws); err != nil {
			return err
		}
		return tx.PutKnowledgeBase(kb)
	})
	view(t, s, func(tx service.Tx) error {
		w, _ := tx.Workspace("ws_1")
		got, _ := tx.KnowledgeBase(kbOne)
		if w.Embeddings.Configured() || w.EmbeddingsKey != "" || got.EmbeddingError != nil {
			t.Errorf("after clearing: %+v %q %v", w.Embeddings, w.EmbeddingsKey, got.EmbeddingError)
		}
		return nil
	})
}
