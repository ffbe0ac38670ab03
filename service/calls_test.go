package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func ptr[T any](v T) *T { return &v }

func TestCallStateMachineAndCourse(t *testing.T) {
	e := newCallsEnv(t)
	ctx := e.owner
	c, err := e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != data.CallRegistered || !c.CreatedAt.Equal(data.IDTime(data.PrefixCall, c.ID)) || c.Transcript == nil || c.Variables == nil {
		t.Fatalf("registered call = %+v", c)
	}
	// ongoing fills started_at from the clock; ended fills ended_at and the duration.
	e.now = e.now.Add(time.Second)
	on, err := e.svc.Calls.UpdateCall(ctx, c.ID, data.CallUpdate{Status: data.Some(data.CallOngoing)})
	if err != nil || on.StartedAt == nil || !on.StartedAt.Equal(e.now) {
		t.Fatalf("ongoing = %+v, %v", on, err)
	}
	e.now = e.now.Add(90 * time.Second)
	end, err := e.svc.Calls.UpdateCall(ctx, c.ID, data.CallUpdate{Status: data.Some(data.CallEnded), DisconnectionReason: data.Some("user_hangup")})
	if err != nil || end.DurationMS == nil || *end.DurationMS != 90_000 || !end.EndedAt.Equal(e.now) {
		t.Fatalf("ended = %+v, %v", end, err)
	}
	// Backwards, or changing a finished call's course, is a conflict; adding analysis is not.
	for _, in := range []data.CallUpdate{
		{Status: data.Some(data.CallOngoing)},
		{Status: data.Some(data.CallFailed)},
		{DurationMS: data.Some(int64(1))},
		{DisconnectionReason: data.Some("agent_hangup")},
		{StartedAt: data.Some(data.NewTime(e.now))},
	} {
		_, err := e.svc.Calls.UpdateCall(ctx, c.ID, in)
		wantCode(t, err, data.ECONFLICT)
	}
	if _, err := e.svc.Calls.UpdateCall(ctx, c.ID, data.CallUpdate{Analysis: data.Some(map[string]any{"ok": true}), DurationMS: data.Some(int64(90_000))}); err != nil {
		t.Errorf("analysis on an ended call with its own duration: %v", err)
	}
	got, _ := e.svc.Calls.Call(ctx, c.ID)
	if got.Status != data.CallEnded || *got.DurationMS != 90_000 || got.Analysis["ok"] != true {
		t.Errorf("stored = %+v", got)
	}
}

func TestCallRegisterChecksInput(t *testing.T) {
	e := newCallsEnv(t)
	ctx := e.owner
	// The transcript holds at most MaxTranscriptItems items: the bound is accepted, one
	// more is refused, and nothing is stored.
	items := make([]data.TranscriptItem, validate.MaxTranscriptItems+1)
	for i := range items {
		items[i] = data.TranscriptItem{Role: "user", Content: "hi"}
	}
	if _, err := e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb, Transcript: items[:validate.MaxTranscriptItems]}); err != nil {
		t.Fatalf("%d transcript items: %v", validate.MaxTranscriptItems, err)
	}
	_, err := e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb, Transcript: items})
	wantFields(t, err, "transcript")
	long := data.TranscriptItem{Role: "agent", Content: strings.Repeat("x", validate.MaxTranscriptContent+1)}
	_, err = e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb, Transcript: []data.TranscriptItem{long}})
	wantFields(t, err, "transcript.0.content")
	// Another workspace's agent or number, and an agent outside agent_ids, are not agents
	// of this workspace.
	n, err := e.svc.Numbers.CreateNumber(e.otherCtx, data.NumberCreate{PhoneNumber: "+15550009", Provider: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.otherAg, NumberID: &n.ID, Direction: data.DirectionWeb})
	wantFields(t, err, "agent_id", "number_id")
	_, err = e.svc.Calls.RegisterCall(e.limited(e.a), data.CallCreate{AgentID: e.b, Direction: data.DirectionWeb})
	wantFields(t, err, "agent_id")
	// A started_at in the future of an ended call's filled-in ended_at is refused.
	future := data.NewTime(e.now.Add(time.Hour))
	_, err = e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb, Status: ptr(data.CallEnded), StartedAt: &future})
	wantFields(t, err, "ended_at")
	list, _, _ := e.svc.Calls.ListCalls(ctx, data.CallFilter{}, data.PageRequest{})
	if len(list) != 1 {
		t.Errorf("calls stored = %d, want only the accepted one", len(list))
	}
	// A list's range: to after from, named with the faults the server found reading the
	// query, in one 422; from equal to to is already empty.
	backwards := data.CallFilter{From: e.now, To: e.now}
	_, _, err = e.svc.Calls.ListCalls(ctx, backwards, data.PageRequest{})
	wantFields(t, err, "to")
	_, _, err = e.svc.Calls.ListCalls(data.WithInputFaults(ctx, data.FieldError("per_page", "bad")), backwards, data.PageRequest{})
	wantFields(t, err, "per_page", "to")
	if _, _, err := e.svc.Calls.ListCalls(ctx, data.CallFilter{From: e.now, To: e.now.Add(time.Millisecond)}, data.PageRequest{}); err != nil {
		t.Errorf("a range of one millisecond: %v", err)
	}
}

func TestCallsOfHiddenAgentsAreNotFound(t *testing.T) {
	e := newCallsEnv(t)
	ca, err := e.svc.Calls.RegisterCall(e.owner, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := e.svc.Calls.RegisterCall(e.owner, data.CallCreate{AgentID: e.b, Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	onlyA := e.limited(e.a)
	_, err = e.svc.Calls.Call(onlyA, cb.ID)
	wantCode(t, err, data.ENOTFOUND)
	wantCode(t, e.svc.Calls.DeleteCall(onlyA, cb.ID), data.ENOTFOUND)
	_, err = e.svc.Calls.Call(e.otherCtx, ca.ID)
	wantCode(t, err, data.ENOTFOUND)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		f    data.CallFilter
		want int
	}{
		{"owner", e.owner, data.CallFilter{}, 2},
		{"limited", onlyA, data.CallFilter{}, 1},
		{"limited, its agent", onlyA, data.CallFilter{AgentID: e.a}, 1},
		{"limited, a hidden agent", onlyA, data.CallFilter{AgentID: e.b}, 0},
		{"another workspace", e.otherCtx, data.CallFilter{}, 0},
	} {
		list, _, err := e.svc.Calls.ListCalls(tc.ctx, tc.f, data.PageRequest{})
		if err != nil || len(list) != tc.want {
			t.Errorf("%s: %d calls, %v; want %d", tc.name, len(list), err, tc.want)
		}
	}
}

func TestCallMinutesLimit(t *testing.T) {
	e := newCallsEnv(t)
	ctx := e.owner
	if _, err := e.svc.Subscriptions.SetSubscription(context.Background(), e.ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitCallMinutes: 2}}); err != nil {
		t.Fatal(err)
	}
	// 61 s count as two started minutes: the limit is used up.
	if _, err := e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb, Status: ptr(data.CallEnded), DurationMS: ptr(int64(61_000))}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb})
	wantCode(t, err, data.EQUOTA)
	// Next month the minutes start again.
	e.now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if _, err := e.svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb}); err != nil {
		t.Errorf("register in the next month: %v", err)
	}
}
