package client_test

import (
	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// callStart starts an outbound call of agent (published), then runs a rollout on it: set,
// read (a call started under it says so), ended.
func (tr *tour) callStart(agent *data.Agent) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	to := "+15559990000"
	a, err := c.Calls.Start(ctx, data.CallStart{Direction: data.DirectionOutbound, ToNumber: &to, AgentID: &agent.ID,
		Variables: map[string]any{"customer_name": "Ada"}}, client.WithIdempotencyKey("start-1"))
	check("call start", err)
	if a.Call.Status != data.CallRegistered || a.Call.AgentID != agent.ID || a.Agent.ID != agent.ID ||
		a.Variant == nil || a.Variant.Version != *a.Call.AgentVersion || a.Variant.Rollout || a.Agent.Variables["called_number"] != to {
		t.Fatalf("start answer: call %+v agent %+v variant %+v", a.Call, a.Agent, a.Variant)
	}
	again, err := c.Calls.Start(ctx, data.CallStart{Direction: data.DirectionOutbound, ToNumber: &to, AgentID: &agent.ID,
		Variables: map[string]any{"customer_name": "Ada"}}, client.WithIdempotencyKey("start-1"))
	check("call start replayed", err)
	if again.Call.ID != a.Call.ID {
		t.Errorf("a replayed start registered %s after %s", again.Call.ID, a.Call.ID)
	}
	bad := "4155550123"
	_, err = c.Calls.Start(ctx, data.CallStart{Direction: data.DirectionInbound, ToNumber: &bad})
	if e := mustErr(t, err, 422); e.Fields["to_number"] == nil {
		t.Errorf("a bad to_number: %+v", e)
	}

	v := *a.Call.AgentVersion
	r, etag, err := c.Agents.SetRollout(ctx, agent.ID, data.RolloutSet{Variants: []data.RolloutVariantSet{{Version: v, Weight: 100}}})
	check("rollout set", err)
	if len(r.Variants) != 1 || r.Variants[0].Weight != 100 || etag == "" {
		t.Errorf("rollout: %+v (%q)", r, etag)
	}
	under, err := c.Calls.Start(ctx, data.CallStart{Direction: data.DirectionOutbound, ToNumber: &to, AgentID: &agent.ID})
	check("call start under a rollout", err)
	if !under.Variant.Rollout || under.Variant.Version != v {
		t.Errorf("variant under the rollout: %+v", under.Variant)
	}
	_, etag, err = c.Agents.Rollout(ctx, agent.ID)
	check("rollout show", err)
	check("rollout end", c.Agents.EndRollout(ctx, agent.ID, client.IfMatch(etag)))
	_, _, err = c.Agents.Rollout(ctx, agent.ID)
	mustErr(t, err, 404)
}
