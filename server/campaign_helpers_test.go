package server_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// campaignEnv is a startEnv (a published agent, a number, a calls:runtime key) on a clock
// the test sets.
type campaignEnv struct {
	*startEnv
	now atomic.Int64 // Unix nanoseconds
}

func newCampaignEnv(t *testing.T, at time.Time) *campaignEnv {
	t.Helper()
	e := &campaignEnv{}
	e.now.Store(at.UnixNano())
	e.startEnv = newStartEnvWith(t, func(o *bolt.Options) { o.Now = e.clock })
	return e
}

func (e *campaignEnv) clock() time.Time { return time.Unix(0, e.now.Load()).UTC() }

// set moves the clock to at.
func (e *campaignEnv) set(at time.Time) { e.now.Store(at.UnixNano()) }

// advance moves the clock on by d.
func (e *campaignEnv) advance(d time.Duration) { e.now.Add(int64(d)) }

// everyDay is a window open every day from 00:00 to 23:59.
var everyDay = map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"}

// campaignBody is a campaign of e's agent and number over phones, with more's members.
func (e *campaignEnv) campaignBody(phones []string, more map[string]any) map[string]any {
	rs := make([]any, len(phones))
	for i, p := range phones {
		rs[i] = map[string]any{"phone_number": p}
	}
	b := map[string]any{"name": "Reminders", "agent_id": e.agent, "number_id": e.number, "window": everyDay,
		"max_concurrent": 10, "recipients": rs}
	for k, v := range more {
		b[k] = v
	}
	return b
}

// create posts a campaign and returns its id.
func (e *campaignEnv) create(body map[string]any) string {
	e.t.Helper()
	r := e.Do("POST", "/api/v1/campaigns", e.Owner.Token, body)
	testkit.Expect(e.t, r, 201)
	return r.Data()["id"].(string)
}

// claim claims up to max tasks with the runtime key.
func (e *campaignEnv) claim(max int) []map[string]any {
	e.t.Helper()
	r := e.Do("POST", "/api/v1/dial-tasks/claim", e.runtime, map[string]any{"max": max})
	testkit.Expect(e.t, r, 200)
	var out []map[string]any
	for _, x := range r.Data()["tasks"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// end reports a task's call ended with status and reason, as a runtime does.
func (e *campaignEnv) end(task map[string]any, status, reason string) {
	e.t.Helper()
	id := task["call"].(map[string]any)["id"].(string)
	if status == "ended" {
		testkit.Expect(e.t, e.Do("PUT", "/api/v1/calls/"+id, e.runtime, map[string]any{"status": "ongoing"}), 204)
	}
	body := map[string]any{"status": status}
	if reason != "" {
		body["disconnection_reason"] = reason
	}
	testkit.Expect(e.t, e.Do("PUT", "/api/v1/calls/"+id, e.runtime, body), 204)
}

// campaign reads a campaign as the owner.
func (e *campaignEnv) campaign(id string) map[string]any {
	e.t.Helper()
	r := e.Do("GET", "/api/v1/campaigns/"+id, e.Owner.Token, nil)
	testkit.Expect(e.t, r, 200)
	return r.Data()
}

// counts reads a campaign's counts.
func (e *campaignEnv) counts(id string) map[string]any {
	return e.campaign(id)["counts"].(map[string]any)
}

// recipients reads a campaign's recipients (up to 100) by phone number.
func (e *campaignEnv) recipients(id string) map[string]map[string]any {
	e.t.Helper()
	r := e.Do("GET", "/api/v1/campaigns/"+id+"/recipients?per_page=100", e.Owner.Token, nil)
	testkit.Expect(e.t, r, 200)
	out := map[string]map[string]any{}
	for _, x := range r.List() {
		m := x.(map[string]any)
		out[m["phone_number"].(string)] = m
	}
	return out
}

// toNumbers are the to_number of tasks.
func toNumbers(tasks []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, t := range tasks {
		out[t["to_number"].(string)] = t
	}
	return out
}
