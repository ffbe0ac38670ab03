package storetest

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testChunksRevision: a knowledge base's chunk revision moves on with every change of its
// chunks (a put, a source's delete) and with nothing else.
func testChunksRevision(t *testing.T, open Opener) {
	s := open(t)
	kb := &data.KnowledgeBase{ID: kbOne, Name: "One", WorkspaceID: "ws_1"}
	text := &data.KnowledgeSource{ID: srcText, Type: data.SourceTexts, KnowledgeBaseID: kbOne, WorkspaceID: "ws_1", Content: "x", Status: data.SourceIndexed}
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertKnowledgeBase(kb); err != nil {
			return err
		}
		return tx.PutKnowledgeSource(text)
	})
	rev := func() uint64 {
		t.Helper()
		var r uint64
		view(t, s, func(tx service.Tx) error {
			var err error
			r, err = tx.ChunksRevision(kbOne)
			return err
		})
		return r
	}
	seen := map[uint64]bool{rev(): true}
	step := func(what string, fn func(tx service.Tx) error) {
		t.Helper()
		update(t, s, fn)
		r := rev()
		if seen[r] {
			t.Errorf("after %s the chunk revision is %d, one it had before", what, r)
		}
		seen[r] = true
	}
	step("a put", func(tx service.Tx) error { return tx.PutSourceChunks(kbOne, srcText, []data.SourceChunk{{Text: "a"}}) })
	step("another put", func(tx service.Tx) error { return tx.PutSourceChunks(kbOne, srcText, []data.SourceChunk{{Text: "b"}}) })
	before := rev()
	update(t, s, func(tx service.Tx) error { kb.Name = "Renamed"; return tx.PutKnowledgeBase(kb) })
	if rev() != before {
		t.Error("renaming the knowledge base moved its chunk revision")
	}
	step("a source's delete", func(tx service.Tx) error { return tx.DeleteKnowledgeSource(text) })
}
