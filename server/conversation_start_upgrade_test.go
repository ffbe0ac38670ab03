package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestConversationStartKeptBeforeTheUpgradeNoted: a start's answer kept before starts
// were noted names no conversation, so an end left it as kept, raw when redaction was
// turned on meanwhile. The upgrade lists every answer kept with status 201 (bbolt schema
// 20, PostgreSQL 0031: ListStartToNote stands in for it here) and its job
// (idempotency.note_starts) opens each: a start's is noted with its conversation, and
// redacted at once when that conversation already ended, cut to its claim when it was
// deleted with its call (the delete found it unnoted); one whose agent was deleted was
// cut by that delete, which cuts every answer kept with the agent; an open
// one's is redacted by
// its end, as a start kept now is; any other answer is left as it is. Each is taken off
// the list. Both engines.
func TestConversationStartKeptBeforeTheUpgradeNoted(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	tokenID := tokenIDOf(t, e.tok)
	_, _, open := startCardGreeter(t, e, "open")
	_, _, ended := startCardGreeter(t, e, "ended")
	deletedPath, deletedBody, deleted := startCardGreeter(t, e, "deleted")
	agentGonePath, agentGoneBody, agentGone := startCardGreeter(t, e, "agent gone")
	other := e.Do("POST", "/api/v1/agents", e.tok, map[string]any{"name": "Other"}, "Idempotency-Key", "other")
	testkit.Expect(t, other, 201)
	ws := e.Owner.WorkspaceID
	// As kept before the upgrade: naming no conversation, listed by the upgrade.
	if err := e.Store.Update(context.Background(), func(tx service.Tx) error {
		for _, key := range []string{"open", "ended", "deleted", "agent gone", "other"} {
			r, err := tx.IdempotentResponse(tokenID, key)
			if err != nil || r == nil {
				t.Fatalf("kept %s: %v, %v", key, r, err)
			}
			r.StartedConversationID = ""
			if err := tx.PutIdempotentResponse(tokenID, key, r); err != nil {
				return err
			}
			if err := tx.ListStartToNote(ws, tokenID, key); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	otherBefore := keptBody(t, e, tokenID, "other")
	redactCards(t, e)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+ended.Data()["id"].(string)+"/end", e.tok, nil), 200)
	if kept := keptBody(t, e, tokenID, "ended"); !strings.Contains(kept, "4111 1111 1111 1111") {
		t.Fatalf("an end before the job found the unnoted answer: %s", kept)
	}

	// Deleted with its call before the job: the delete found no noted answer to cut.
	call := e.Do("POST", "/api/v1/conversations/"+deleted.Data()["id"].(string)+"/end", e.tok, nil)
	testkit.Expect(t, call, 200)
	testkit.Expect(t, e.Do("DELETE", "/api/v1/calls/"+call.Data()["id"].(string), e.tok, nil), 204)
	if kept := keptBody(t, e, tokenID, "deleted"); !strings.Contains(kept, "4111") {
		t.Fatalf("a delete before the job found the unnoted answer: %s", kept)
	}

	// Its agent deleted before the job: unnoted, the answer is still kept with its
	// agent, and the delete cuts every answer kept with the agent (kept3).
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+agentGone.Data()["agent_id"].(string), e.tok, nil), 204)
	if kept := keptBody(t, e, tokenID, "agent gone"); kept != "" {
		t.Fatalf("an agent's delete before the job left the unnoted answer: %s", kept)
	}

	runner := e.Svc.Jobs.NewRunner(service.RunnerOptions{Owner: "upgrade", Kinds: []string{service.JobKindNoteStarts}})
	if err := e.Store.Update(context.Background(), func(tx service.Tx) error {
		_, err := e.Svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ws, Kind: service.JobKindNoteStarts, UniqueKey: service.JobKindNoteStarts})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v", n, err)
	}
	if err := e.Store.View(context.Background(), func(tx service.Tx) error {
		left, err := tx.StartsToNote(ws, 10)
		if len(left) != 0 {
			t.Errorf("still listed after the job: %+v", left)
		}
		for key, want := range map[string]string{"open": open.Data()["id"].(string), "ended": ended.Data()["id"].(string), "deleted": deleted.Data()["id"].(string),
			"agent gone": "", "other": ""} { // a claim has no body to tell its conversation
			r, _ := tx.IdempotentResponse(tokenID, key)
			if r == nil || r.StartedConversationID != want {
				t.Errorf("kept %s names conversation %q, want %q", key, r.StartedConversationID, want)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if kept := keptBody(t, e, tokenID, "ended"); strings.Contains(kept, "4111") || strings.Count(kept, "[card]") != 2 {
		t.Errorf("the job left the ended conversation's start %s", kept)
	}
	if kept := keptBody(t, e, tokenID, "open"); strings.Count(kept, "4111 1111 1111 1111") != 2 {
		t.Errorf("the job changed the open conversation's start before its end: %s", kept)
	}
	if kept := keptBody(t, e, tokenID, "deleted"); kept != "" {
		t.Errorf("the job left the deleted conversation's start %s", kept)
	}
	retry := e.Do("POST", deletedPath, e.tok, deletedBody, "Idempotency-Key", "deleted")
	testkit.Expect(t, retry, 409)
	if strings.Contains(string(retry.Body), "4111") {
		t.Errorf("the deleted conversation's start replayed: %s", retry.Body)
	}
	if kept := keptBody(t, e, tokenID, "agent gone"); kept != "" {
		t.Errorf("the job left the start of a deleted agent's conversation %s", kept)
	}
	retry = e.Do("POST", agentGonePath, e.tok, agentGoneBody, "Idempotency-Key", "agent gone")
	testkit.Expect(t, retry, 404)
	if strings.Contains(string(retry.Body), "4111") {
		t.Errorf("the deleted agent's conversation's start replayed: %s", retry.Body)
	}
	if kept := keptBody(t, e, tokenID, "other"); kept != otherBefore {
		t.Errorf("the job changed an agent create's answer: %s, was %s", kept, otherBefore)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+open.Data()["id"].(string)+"/end", e.tok, nil), 200)
	if kept := keptBody(t, e, tokenID, "open"); strings.Contains(kept, "4111") || strings.Count(kept, "[card]") != 2 {
		t.Errorf("the end after the job left the start %s", kept)
	}
}
