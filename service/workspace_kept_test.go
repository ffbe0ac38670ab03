package service_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestWorkspaceDeleteTakesKeptAnswersInBatches: a workspace's delete takes what was kept
// for requests made in it under a token bound elsewhere (a visitor's), and what its
// tokens kept wherever they acted, the first service.TokenKeptDeleteBatch in its
// transaction (the workspace's first, then its tokens'); the jobs for the rest, and the
// job a token deleted before had pending, run after the workspace is gone and take the
// rest; what the visitor kept in its own workspace stays. Both engines.
func TestWorkspaceDeleteTakesKeptAnswersInBatches(t *testing.T) {
	env := testkit.New(t, nil)
	u := mustUser(t, env.Svc, "ws-kept@example.com")
	home := u.PersonalWorkspaceID
	ws, err := env.Svc.Workspaces.CreateWorkspace(ownerCtx(u.ID, home), data.WorkspaceCreate{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	const batch = service.TokenKeptDeleteBatch
	past, now := data.NewTime(time.Now().Add(-time.Hour)), data.NewTime(time.Now())
	var bound, earlier, visitor int64
	// Each token's answers: how many, made in which workspace ("": kept before the
	// workspace was noted).
	type answers struct {
		n  int
		in string
	}
	kept := map[*int64][]answers{
		&bound:   {{batch + 5, home}},     // a token of ws acting elsewhere: found by the token
		&earlier: {{batch + 3, ""}},       // deleted before the workspace, its job pending
		&visitor: {{3, ws.ID}, {2, home}}, // bound to home, acting in ws
	}
	if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		for _, id := range []*int64{&bound, &earlier, &visitor} {
			k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: past},
				UserID: u.ID, WorkspaceID: ws.ID, Kind: data.TokenLogin, SecretHash: []byte("h")}
			switch id {
			case &earlier:
				k.ExpiresAt = &past
			case &visitor:
				k.WorkspaceID = home
			}
			if err := tx.InsertAPIKey(k); err != nil {
				return err
			}
			*id = k.ID
			for i, a := range kept[id] {
				for j := range a.n {
					if err := tx.PutIdempotentResponse(k.ID, fmt.Sprint("k-", i, "-", j), &data.IdempotentResponse{Status: 201,
						Body: []byte("a token shown once"), CreatedAt: now, WorkspaceID: a.in}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	left := func(id *int64, i int) int {
		t.Helper()
		n := 0
		if err := env.Store.View(context.Background(), func(tx service.Tx) error {
			for j := range kept[id][i].n {
				r, err := tx.IdempotentResponse(*id, fmt.Sprint("k-", i, "-", j))
				if err != nil {
					return err
				}
				if r != nil {
					n++
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := env.Svc.Auth.PruneTokens(context.Background()); err != nil { // earlier goes, a job for its rest
		t.Fatal(err)
	}
	if n := left(&earlier, 0); n != 3 {
		t.Fatalf("the token deleted before: %d kept; want the 3 its job is to take", n)
	}
	if err := env.Svc.Workspaces.DeleteWorkspace(ownerCtx(u.ID, ws.ID), ws.ID); err != nil {
		t.Fatal(err)
	}
	if n := left(&visitor, 0); n != 0 {
		t.Errorf("the visitor's answers in the workspace: %d kept after its delete; want none", n)
	}
	if n := left(&bound, 0); n != 8 {
		t.Errorf("the workspace's token: %d kept after the delete's transaction; want %d (the batch less the visitor's 3)", n, 8)
	}
	runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteTokenAnswers}})
	ran := 0
	for {
		n, err := runner.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		ran += n
	}
	if ran != 2 {
		t.Errorf("ran %d jobs after the workspace's delete; want 2 (its token's, the earlier token's queued again)", ran)
	}
	if a, b := left(&bound, 0), left(&earlier, 0); a != 0 || b != 0 {
		t.Errorf("after the jobs: the workspace's token keeps %d, the earlier token %d; want none", a, b)
	}
	if n := left(&visitor, 1); n != 2 {
		t.Errorf("the visitor's answers in its own workspace: %d; want its 2", n)
	}
}

// TestRemovedMembersAnswersInTheWorkspaceGoInBatches: a member's removal takes what the
// member's token bound to another workspace kept of requests made in this one, the first
// service.TokenKeptDeleteBatch in its transaction and the rest by a job of the
// workspace; what the token kept of its own workspace stays, as does the token. Both
// engines.
func TestRemovedMembersAnswersInTheWorkspaceGoInBatches(t *testing.T) {
	env := testkit.New(t, nil)
	u := mustUser(t, env.Svc, "ws-owner@example.com")
	v := mustUser(t, env.Svc, "ws-visitor@example.com")
	ws, err := env.Svc.Workspaces.CreateWorkspace(ownerCtx(u.ID, u.PersonalWorkspaceID), data.WorkspaceCreate{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	wctx := ownerCtx(u.ID, ws.ID)
	if _, err := env.Svc.WorkspaceUsers.AddWorkspaceUser(wctx, ws.ID, data.WorkspaceUserAdd{ID: v.ID, Role: data.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	const there, home = service.TokenKeptDeleteBatch + 2, 3
	var token int64
	if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(time.Now())},
			UserID: v.ID, WorkspaceID: v.PersonalWorkspaceID, Kind: data.TokenLogin, SecretHash: []byte("h")}
		if err := tx.InsertAPIKey(k); err != nil {
			return err
		}
		token = k.ID
		for i := range there + home {
			in := ws.ID
			if i >= there {
				in = v.PersonalWorkspaceID
			}
			if err := tx.PutIdempotentResponse(token, fmt.Sprint("k-", i), &data.IdempotentResponse{Status: 201,
				Body: []byte("a member added"), CreatedAt: data.NewTime(time.Now()), WorkspaceID: in}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	left := func(from, to int) int {
		t.Helper()
		n := 0
		if err := env.Store.View(context.Background(), func(tx service.Tx) error {
			for i := from; i < to; i++ {
				r, err := tx.IdempotentResponse(token, fmt.Sprint("k-", i))
				if err != nil {
					return err
				}
				if r != nil {
					n++
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := env.Svc.WorkspaceUsers.RemoveWorkspaceUser(wctx, ws.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	if n := left(0, there); n != there-service.TokenKeptDeleteBatch {
		t.Errorf("after the removal's transaction: %d of the answers made in the workspace kept; want %d", n, there-service.TokenKeptDeleteBatch)
	}
	runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteTokenAnswers}})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs (%v); want the removal's one", n, err)
	}
	if n := left(0, there); n != 0 {
		t.Errorf("after the job: %d of the answers made in the workspace kept; want none", n)
	}
	if n := left(there, there+home); n != home {
		t.Errorf("the token's answers of its own workspace: %d; want its %d", n, home)
	}
	if err := env.Store.View(context.Background(), func(tx service.Tx) error {
		k, err := tx.APIKey(token)
		if k == nil {
			t.Error("the member's token bound to another workspace went with the removal")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestJobOutlivingItsWorkspaceFailsWithoutAnEvent: a job queued under a workspace that
// is gone (a workspace's delete queues the rest of its kept answers' work so) that fails
// for good records no job.failed: no one could read it, and it would start the deleted
// workspace's audit chain again. The same job of a workspace that is there records one.
// Both engines.
func TestJobOutlivingItsWorkspaceFailsWithoutAnEvent(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.orphan", Module: data.ModuleAgents, EveryAgent: true,
		Handle: func(context.Context, *service.JobRun) error { return errors.New("refused for good") }})
	const gone = "ws_gone"
	orphan := e.enqueue(data.JobEnqueue{Kind: "test.orphan", WorkspaceID: gone})
	kept := e.enqueue(data.JobEnqueue{Kind: "test.orphan"})
	r := e.runner("r")
	for e.runDue(r) > 0 {
	}
	for _, j := range []*data.JobRecord{orphan, kept} {
		if got := e.job(j.ID); got == nil || got.Status != data.JobFailed {
			t.Fatalf("job %s: %+v; want it failed", j.ID, got)
		}
	}
	if got := e.jobFailures(gone); len(got) != 0 {
		t.Errorf("job.failed recorded for a deleted workspace: %+v", got)
	}
	if err := e.store.View(context.Background(), func(tx service.Tx) error {
		head, err := tx.EventHead(gone)
		if head != "" {
			t.Errorf("the deleted workspace has an audit chain again: head %q", head)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := e.jobFailures("ws_1"); len(got) != 1 || got[0].ID != kept.ID {
		t.Errorf("job.failed of the workspace that is there: %+v; want its job's one", got)
	}
}

// TestRemovalJobSparesAnswersKeptAfterTheMemberIsAddedAgain: a member removed with more
// answers kept in the workspace than the removal's batch, by a token bound elsewhere, is
// added again before the removal's job runs, and keeps an answer there since (a live
// request's, which a retry must get replayed). The job takes what was kept by the
// removal and leaves that one. Removed again before the first job ran, with more kept
// in between than a batch, the second removal's job is its own and takes the rest.
func TestRemovalJobSparesAnswersKeptAfterTheMemberIsAddedAgain(t *testing.T) {
	clock := &movableClock{t: time.Now().UTC()}
	env := testkit.New(t, func(o *bolt.Options) { o.Now = clock.now })
	u := mustUser(t, env.Svc, "ws-owner@example.com")
	v := mustUser(t, env.Svc, "ws-visitor@example.com")
	ws, err := env.Svc.Workspaces.CreateWorkspace(ownerCtx(u.ID, u.PersonalWorkspaceID), data.WorkspaceCreate{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	wctx := ownerCtx(u.ID, ws.ID)
	add := func() {
		t.Helper()
		if _, err := env.Svc.WorkspaceUsers.AddWorkspaceUser(wctx, ws.ID, data.WorkspaceUserAdd{ID: v.ID, Role: data.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
	}
	add()
	var token int64
	keep := func(keys ...string) {
		t.Helper()
		if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
			if token == 0 {
				k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(clock.now())},
					UserID: v.ID, WorkspaceID: v.PersonalWorkspaceID, Kind: data.TokenLogin, SecretHash: []byte("h")}
				if err := tx.InsertAPIKey(k); err != nil {
					return err
				}
				token = k.ID
			}
			for _, key := range keys {
				if err := tx.PutIdempotentResponse(token, key, &data.IdempotentResponse{Status: 201,
					Body: []byte("a member added"), CreatedAt: data.NewTime(clock.now()), WorkspaceID: ws.ID}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var before []string
	for i := range service.TokenKeptDeleteBatch + 2 {
		before = append(before, fmt.Sprint("k-", i))
	}
	keep(before...)
	kept := func(key string) bool {
		t.Helper()
		var r *data.IdempotentResponse
		if err := env.Store.View(context.Background(), func(tx service.Tx) (err error) {
			r, err = tx.IdempotentResponse(token, key)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return r != nil
	}
	runJobs := func() int {
		t.Helper()
		runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 4, Kinds: []string{service.JobKindDeleteTokenAnswers}})
		n, err := runner.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	remove := func() {
		t.Helper()
		if err := env.Svc.WorkspaceUsers.RemoveWorkspaceUser(wctx, ws.ID, v.ID); err != nil {
			t.Fatal(err)
		}
	}
	remove()
	clock.add(time.Second)
	add()
	keep("after-readd")
	if n := runJobs(); n != 1 {
		t.Fatalf("ran %d jobs; want the removal's one", n)
	}
	for _, key := range before {
		if kept(key) {
			t.Fatalf("%s, kept before the removal, outlived its job", key)
		}
	}
	if !kept("after-readd") {
		t.Fatal("the removal's job took the answer the member, added again, kept since")
	}

	// Removed, added, removed again, the first job still pending: each removal's job
	// takes what was kept by its own time.
	keep(before...)
	remove()
	clock.add(time.Second)
	add()
	var between []string
	for i := range service.TokenKeptDeleteBatch + 2 {
		between = append(between, fmt.Sprint("between-", i))
	}
	keep(between...)
	remove()
	if n := runJobs(); n != 2 {
		t.Fatalf("ran %d jobs; want each removal's one", n)
	}
	for _, key := range append(append(before, "after-readd"), between...) {
		if kept(key) {
			t.Errorf("%s, kept before the second removal, outlived its job", key)
		}
	}
}

// TestRemovalJobGoesOnPastWhatItSpares: a member re-added after its removal keeps more
// answers in the workspace than a batch, before and after (in key order) those the
// removal's job is to take, more than a batch of which are left: the job's batches go
// on each where the one before stopped, passing over at most a batch of spared answers
// each, and it takes every answer kept by the removal and none kept since. Both engines.
// (That each spared answer is read once is storetest's
// workspace_kept_answers_before_walk_once, on both engines.)
func TestRemovalJobGoesOnPastWhatItSpares(t *testing.T) {
	clock := &movableClock{t: time.Now().UTC()}
	env := testkit.New(t, func(o *bolt.Options) { o.Now = clock.now })
	u := mustUser(t, env.Svc, "ws-owner@example.com")
	v := mustUser(t, env.Svc, "ws-visitor@example.com")
	ws, err := env.Svc.Workspaces.CreateWorkspace(ownerCtx(u.ID, u.PersonalWorkspaceID), data.WorkspaceCreate{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	wctx := ownerCtx(u.ID, ws.ID)
	add := func() {
		t.Helper()
		if _, err := env.Svc.WorkspaceUsers.AddWorkspaceUser(wctx, ws.ID, data.WorkspaceUserAdd{ID: v.ID, Role: data.RoleAdmin}); err != nil {
			t.Fatal(err)
		}
	}
	add()
	var token int64
	keep := func(prefix string, n int) []string {
		t.Helper()
		var keys []string
		if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
			if token == 0 {
				k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(clock.now())},
					UserID: v.ID, WorkspaceID: v.PersonalWorkspaceID, Kind: data.TokenLogin, SecretHash: []byte("h")}
				if err := tx.InsertAPIKey(k); err != nil {
					return err
				}
				token = k.ID
			}
			for i := range n {
				key := fmt.Sprintf("%s-%04d", prefix, i)
				keys = append(keys, key)
				if err := tx.PutIdempotentResponse(token, key, &data.IdempotentResponse{Status: 201,
					Body: []byte("kept"), CreatedAt: data.NewTime(clock.now()), WorkspaceID: ws.ID}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	due := keep("k", service.TokenKeptDeleteBatch*5/2)
	if err := env.Svc.WorkspaceUsers.RemoveWorkspaceUser(wctx, ws.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	clock.add(time.Second)
	add()
	since := append(keep("a", service.TokenKeptDeleteBatch*3/2), keep("m", service.TokenKeptDeleteBatch+200)...)
	runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteTokenAnswers}})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs (%v); want the removal's one", n, err)
	}
	if err := env.Store.View(context.Background(), func(tx service.Tx) error {
		for i, keys := range [][]string{due, since} {
			for _, key := range keys {
				r, err := tx.IdempotentResponse(token, key)
				if err != nil {
					return err
				}
				if want := i == 1; (r != nil) != want {
					t.Fatalf("%s: kept %v; want %v (kept by the removal: %v)", key, r != nil, want, i == 0)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
