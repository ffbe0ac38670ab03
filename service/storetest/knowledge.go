package storetest

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Ids of the knowledge suite: valid ids, as an engine may lay files out by them.
const (
	kbWS    = "ws_01JAAAAAAAAAAAAAAAAAAAAAAA"
	kbWS2   = "ws_01JBBBBBBBBBBBBBBBBBBBBBBB"
	kbOne   = "kb_01JAAAAAAAAAAAAAAAAAAAAAAA"
	kbTwo   = "kb_01JBBBBBBBBBBBBBBBBBBBBBBB"
	srcText = "src_01JAAAAAAAAAAAAAAAAAAAAAAA"
	srcURL  = "src_01JBBBBBBBBBBBBBBBBBBBBBBB"
	srcFile = "src_01JCCCCCCCCCCCCCCCCCCCCCCC"
)

func testKnowledgeBases(t *testing.T, open Opener) {
	s := open(t)
	at := data.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	one := &data.KnowledgeBase{ID: kbOne, Name: "One", WorkspaceID: kbWS, CreatedAt: at, UpdatedAt: at}
	two := &data.KnowledgeBase{ID: kbTwo, Name: "Two", WorkspaceID: kbWS, CreatedAt: at, UpdatedAt: at}
	view(t, s, func(tx service.Tx) error {
		kb, err := tx.KnowledgeBase(kbOne)
		if kb != nil {
			t.Errorf("absent knowledge base = %+v, want nil", kb)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertKnowledgeBase(one); err != nil {
			return err
		}
		return tx.InsertKnowledgeBase(two)
	})
	renamed := *one
	renamed.Name, renamed.UpdatedAt = "Renamed", data.NewTime(at.Add(time.Second))
	update(t, s, func(tx service.Tx) error { return tx.PutKnowledgeBase(&renamed) })
	view(t, s, func(tx service.Tx) error {
		kb, err := tx.KnowledgeBase(kbOne)
		if err != nil {
			return err
		}
		if kb.Name != "Renamed" || kb.WorkspaceID != kbWS || !kb.UpdatedAt.Equal(renamed.UpdatedAt.Time) || kb.Texts != nil {
			t.Errorf("stored knowledge base = %+v, want the renamed one without its source lists", kb)
		}
		if err := tx.KnowledgeBaseSources(kb); err != nil {
			return err
		}
		if kb.Texts == nil || kb.URLs == nil || kb.Files == nil || len(kb.Texts)+len(kb.URLs)+len(kb.Files) != 0 {
			t.Errorf("sources of an empty knowledge base = %+v, want three empty lists", kb)
		}
		page, _, err := tx.KnowledgeBasePage(kbWS, data.PageRequest{})
		if err != nil {
			return err
		}
		if len(page) != 2 || page[0].ID != kbTwo || page[1].ID != kbOne || page[0].Texts == nil {
			t.Errorf("page = %v, want both, newest first, with their sources", kbIDs(page))
		}
		other, _, err := tx.KnowledgeBasePage(kbWS2, data.PageRequest{})
		if len(other) != 0 {
			t.Errorf("another workspace's page = %v, want none", kbIDs(other))
		}
		return err
	})
}

func kbIDs(list []*data.KnowledgeBase) []string {
	var ids []string
	for _, kb := range list {
		ids = append(ids, kb.ID)
	}
	return ids
}

func testKnowledgeSources(t *testing.T, open Opener) {
	s := open(t)
	kb := &data.KnowledgeBase{ID: kbOne, Name: "One", WorkspaceID: kbWS}
	text := &data.KnowledgeSource{ID: srcText, Type: data.SourceTexts, KnowledgeBaseID: kbOne, WorkspaceID: kbWS, Content: "Hello", Status: data.SourceIndexed}
	url := &data.KnowledgeSource{ID: srcURL, Type: data.SourceURLs, KnowledgeBaseID: kbOne, WorkspaceID: kbWS, URL: "https://example.com/", Status: data.SourcePending, Attempt: 1}
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertKnowledgeBase(kb); err != nil {
			return err
		}
		if err := tx.PutKnowledgeSource(text); err != nil {
			return err
		}
		if err := tx.PutKnowledgeSource(url); err != nil {
			return err
		}
		return tx.PutSourceChunks(kbOne, srcText, []data.SourceChunk{{Text: "a"}, {Text: "b", Vector: []float32{0.5, -1}}})
	})
	view(t, s, func(tx service.Tx) error {
		n, err := tx.CountKnowledgeSources(kbOne)
		if n != 2 {
			t.Errorf("count = %d, want 2", n)
		}
		got, _ := tx.KnowledgeSource(kbOne, srcURL)
		if got == nil || got.URL != url.URL || got.Attempt != 1 || got.WorkspaceID != kbWS {
			t.Errorf("url source = %+v, want it with its attempt and workspace", got)
		}
		if absent, _ := tx.KnowledgeSource(kbTwo, srcURL); absent != nil {
			t.Errorf("a source under another knowledge base = %+v, want nil", absent)
		}
		pending, _ := tx.PendingURLSources()
		if len(pending) != 1 || pending[0].ID != srcURL {
			t.Errorf("pending = %+v, want the url source", pending)
		}
		full := &data.KnowledgeBase{ID: kbOne}
		if err := tx.KnowledgeBaseSources(full); err != nil {
			return err
		}
		if len(full.Texts) != 1 || full.Texts[0].Content != "Hello" || len(full.URLs) != 1 || len(full.Files) != 0 {
			t.Errorf("record's sources = %+v", full)
		}
		return err
	})
	// A url put with another status leaves the pending list.
	done := *url
	done.Status = data.SourceFailed
	update(t, s, func(tx service.Tx) error { return tx.PutKnowledgeSource(&done) })
	view(t, s, func(tx service.Tx) error {
		pending, err := tx.PendingURLSources()
		if len(pending) != 0 {
			t.Errorf("pending after the url failed = %+v, want none", pending)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error { return tx.PutKnowledgeSource(url) })
	update(t, s, func(tx service.Tx) error { return tx.DeleteKnowledgeSource(url) })
	update(t, s, func(tx service.Tx) error { return tx.DeleteKnowledgeSource(text) })
	view(t, s, func(tx service.Tx) error {
		n, _ := tx.CountKnowledgeSources(kbOne)
		pending, _ := tx.PendingURLSources()
		chunks := allChunks(t, tx, kbOne)
		if n != 0 || len(pending) != 0 || len(chunks) != 0 {
			t.Errorf("after deleting both sources: %d sources, pending %v, chunks %v; want nothing", n, pending, chunks)
		}
		return nil
	})
}

// allChunks lists a knowledge base's chunks as "<source>/<text>/<vector length>".
func allChunks(t testing.TB, tx service.Tx, kbID string) []string {
	var out []string
	err := tx.EachSourceChunks(kbID, func(sourceID string, chunks []data.SourceChunk) error {
		for _, c := range chunks {
			out = append(out, sourceID+"/"+c.Text+"/"+strings.Repeat("v", len(c.Vector)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testKnowledgeChunks(t *testing.T, open Opener) {
	s := open(t)
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutSourceChunks(kbOne, srcText, []data.SourceChunk{{Text: "t0"}, {Text: "t1", Vector: []float32{1, 2}}}); err != nil {
			return err
		}
		if err := tx.PutSourceChunks(kbOne, srcURL, []data.SourceChunk{{Text: "u0"}}); err != nil {
			return err
		}
		return tx.PutSourceChunks(kbTwo, srcFile, []data.SourceChunk{{Text: "f0"}})
	})
	view(t, s, func(tx service.Tx) error {
		got := allChunks(t, tx, kbOne)
		want := []string{srcText + "/t0/", srcText + "/t1/vv", srcURL + "/u0/"}
		if !slices.Equal(got, want) {
			t.Errorf("chunks = %v, want %v (by source, in order, this knowledge base only)", got, want)
		}
		var vec []float32
		tx.EachSourceChunks(kbOne, func(sourceID string, chunks []data.SourceChunk) error {
			if sourceID == srcText {
				vec = slices.Clone(chunks[1].Vector)
			}
			return nil
		})
		if !slices.Equal(vec, []float32{1, 2}) {
			t.Errorf("vector = %v, want [1 2]", vec)
		}
		return nil
	})
	// A put replaces the source's chunks; fewer chunks leave none of the old behind.
	update(t, s, func(tx service.Tx) error {
		return tx.PutSourceChunks(kbOne, srcText, []data.SourceChunk{{Text: "new"}})
	})
	update(t, s, func(tx service.Tx) error { return tx.PutSourceChunks(kbOne, srcURL, nil) })
	view(t, s, func(tx service.Tx) error {
		if got := allChunks(t, tx, kbOne); !slices.Equal(got, []string{srcText + "/new/"}) {
			t.Errorf("chunks after the replacements = %v", got)
		}
		return nil
	})
	// fn's error ends the walk and comes back.
	stop := errors.New("stop")
	view(t, s, func(tx service.Tx) error {
		if err := tx.EachSourceChunks(kbTwo, func(string, []data.SourceChunk) error { return stop }); err != stop {
			t.Errorf("EachSourceChunks returned %v, want fn's error", err)
		}
		return nil
	})
}

func testKnowledgeDelete(t *testing.T, open Opener) {
	s := open(t)
	kb := &data.KnowledgeBase{ID: kbOne, Name: "One", WorkspaceID: kbWS}
	url := &data.KnowledgeSource{ID: srcURL, Type: data.SourceURLs, KnowledgeBaseID: kbOne, WorkspaceID: kbWS, URL: "https://example.com/", Status: data.SourcePending, Attempt: 1}
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertKnowledgeBase(kb); err != nil {
			return err
		}
		if err := tx.PutKnowledgeSource(url); err != nil {
			return err
		}
		return tx.PutSourceChunks(kbOne, srcURL, []data.SourceChunk{{Text: "x"}})
	})
	var ran []string
	update(t, s, func(tx service.Tx) error {
		tx.OnCommit(func() { ran = append(ran, "delete") })
		return tx.DeleteKnowledgeBase(kb)
	})
	if !slices.Equal(ran, []string{"delete"}) {
		t.Errorf("OnCommit ran %v, want once after the commit", ran)
	}
	view(t, s, func(tx service.Tx) error {
		got, _ := tx.KnowledgeBase(kbOne)
		n, _ := tx.CountKnowledgeSources(kbOne)
		pending, _ := tx.PendingURLSources()
		page, _, _ := tx.KnowledgeBasePage(kbWS, data.PageRequest{})
		if got != nil || n != 0 || len(pending) != 0 || len(page) != 0 || len(allChunks(t, tx, kbOne)) != 0 {
			t.Errorf("after the delete: %+v, %d sources, pending %v, page %v", got, n, pending, kbIDs(page))
		}
		return nil
	})
	// A rolled-back transaction runs no OnCommit function.
	failed := errors.New("roll back")
	err := s.Update(context.Background(), func(tx service.Tx) error {
		tx.OnCommit(func() { ran = append(ran, "rolled back") })
		return failed
	})
	if !errors.Is(err, failed) || len(ran) != 1 {
		t.Errorf("Update = %v, OnCommit ran %v; want the error and nothing run", err, ran)
	}
}

func testKnowledgeFiles(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	if _, err := s.OpenSourceFile(ctx, kbWS, kbOne, srcFile); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("opening an absent file: %v, want not_found", err)
	}
	content := strings.Repeat("file bytes ", 1000)
	if err := s.PutSourceFile(ctx, kbWS, kbOne, srcFile, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	f, err := s.OpenSourceFile(ctx, kbWS, kbOne, srcFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(got) != content[5:] {
		t.Errorf("read back %d bytes (%v), want the content from offset 5", len(got), err)
	}
	if err := s.DiscardSourceFiles(ctx, kbWS, kbOne, []string{srcFile, srcText}); err != nil {
		t.Errorf("discarding a file and an absent one: %v", err)
	}
	if _, err := s.OpenSourceFile(ctx, kbWS, kbOne, srcFile); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("opening a discarded file: %v, want not_found", err)
	}
}

// testKnowledgeFileLifecycle: a source's or a knowledge base's file goes with the delete
// that commits, and stays when the delete rolls back.
func testKnowledgeFileLifecycle(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	kb := &data.KnowledgeBase{ID: kbOne, Name: "One", WorkspaceID: kbWS}
	file := &data.KnowledgeSource{ID: srcFile, Type: data.SourceFiles, KnowledgeBaseID: kbOne, WorkspaceID: kbWS, Filename: "a.txt", Status: data.SourceIndexed}
	other := &data.KnowledgeSource{ID: srcText, Type: data.SourceFiles, KnowledgeBaseID: kbOne, WorkspaceID: kbWS, Filename: "b.txt", Status: data.SourceIndexed}
	for _, src := range []*data.KnowledgeSource{file, other} {
		if err := s.PutSourceFile(ctx, kbWS, kbOne, src.ID, strings.NewReader("content of "+src.ID)); err != nil {
			t.Fatal(err)
		}
	}
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertKnowledgeBase(kb); err != nil {
			return err
		}
		if err := tx.PutKnowledgeSource(file); err != nil {
			return err
		}
		return tx.PutKnowledgeSource(other)
	})
	present := func(id string) bool {
		f, err := s.OpenSourceFile(ctx, kbWS, kbOne, id)
		if err != nil {
			if data.ErrorCode(err) != data.ENOTFOUND {
				t.Fatalf("opening %s: %v", id, err)
			}
			return false
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || string(got) != "content of "+id {
			t.Errorf("file %s reads %q, %v", id, got, err)
		}
		return true
	}
	failed := errors.New("roll back")
	err := s.Update(ctx, func(tx service.Tx) error {
		if err := tx.DeleteKnowledgeSource(file); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) || !present(file.ID) {
		t.Errorf("after a rolled-back source delete (%v) the file is gone", err)
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteKnowledgeSource(file) })
	if present(file.ID) || !present(other.ID) {
		t.Errorf("after the source delete: its file present %v, the other's %v; want gone, kept", present(file.ID), present(other.ID))
	}
	err = s.Update(ctx, func(tx service.Tx) error {
		if err := tx.DeleteKnowledgeBase(kb); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) || !present(other.ID) {
		t.Errorf("after a rolled-back knowledge base delete (%v) its file is gone", err)
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteKnowledgeBase(kb) })
	if present(other.ID) {
		t.Errorf("after the knowledge base delete its file is still there")
	}
}
