package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// An agent's tests as code (conventions §22): an agent that lists `tests` manages them
// whole, each matched by its name within the agent: listed and absent, created; listed
// and different, changed; on the server and not listed, deleted. An agent without `tests`
// leaves its tests as they are.

// testSpec is a test as a file writes it: the members of a test body; max_turns and
// repeat take their defaults when left out.
type testSpec struct {
	Name               string                   `json:"name"`
	User               data.TestUser            `json:"user"`
	Variables          map[string]any           `json:"variables"`
	MaxTurns           *int                     `json:"max_turns"`
	Mocks              map[string]data.ToolMock `json:"mocks"`
	Criteria           []data.Criterion         `json:"criteria"`
	RequiredForPublish bool                     `json:"required_for_publish"`
	Repeat             *int                     `json:"repeat"`
}

// create is the test as a create's body.
func (t *testSpec) create() data.AgentTestCreate {
	in := data.AgentTestCreate{Name: t.Name, User: t.User, Variables: t.Variables, Mocks: t.Mocks, Criteria: t.Criteria,
		RequiredForPublish: t.RequiredForPublish}
	if t.MaxTurns != nil {
		in.MaxTurns = data.Some(*t.MaxTurns)
	}
	if t.Repeat != nil {
		in.Repeat = data.Some(*t.Repeat)
	}
	return in
}

// body is the test as the server would store it: defaults filled in, every writable
// member (client.TestBody), as generic JSON.
func (t *testSpec) body() map[string]any {
	return toTree(client.TestBody(t.create().NewAgentTest())).(map[string]any)
}

// testsFromList reads an agent's tests list: mappings of a test's members, names unique.
func testsFromList(v any, path string) ([]*testSpec, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s.tests: must be a list of tests", path)
	}
	out := []*testSpec{}
	for i, it := range list {
		raw, _ := json.Marshal(it)
		var t testSpec
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		dec.UseNumber() // a test's variables and mocks keep their numbers' text
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s.tests[%d]: %s", path, i, jsonFault(err))
		}
		if t.Name == "" {
			return nil, fmt.Errorf("%s.tests[%d].name: a test needs a name", path, i)
		}
		if slices.ContainsFunc(out, func(o *testSpec) bool { return o.Name == t.Name }) {
			return nil, fmt.Errorf("%s.tests[%d]: the test %q is listed twice", path, i, t.Name)
		}
		out = append(out, &t)
	}
	return out, nil
}

// readTests reads the tests of an agent on the server, each with its ETag, by name.
func readTests(ctx context.Context, c *client.Client, agentID string) (map[string]*remote[data.AgentTest], []string, error) {
	list, err := client.Collect(c.AgentTests.All(ctx, agentID))
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]*remote[data.AgentTest]{}
	var order []string
	for _, t := range reversed(list) {
		rec, etag, err := c.AgentTests.Get(ctx, agentID, t.ID)
		if err != nil {
			return nil, nil, err
		}
		byName[rec.Name] = &remote[data.AgentTest]{rec, etag}
		order = append(order, rec.Name)
	}
	return byName, order, nil
}

// planTests compares the tests of each agent that lists them with the server's.
func (p *plan) planTests(ctx context.Context) error {
	for _, a := range p.des.agents {
		if a.Tests == nil {
			continue
		}
		var have map[string]*remote[data.AgentTest]
		var order []string
		if r, _ := one(p.cur.agents, "agent", a.Name); r != nil {
			var err error
			if have, order, err = readTests(ctx, p.c, r.rec.ID); err != nil {
				return fmt.Errorf("reading the tests of agent %q: %w", a.Name, err)
			}
		}
		for _, t := range a.Tests {
			want := t.body()
			r := have[t.Name]
			if r == nil {
				p.actions = append(p.actions, p.createTest(a, t, want))
				continue
			}
			if act := p.changeTest(a, want, r); act != nil {
				p.actions = append(p.actions, act)
			}
		}
		for _, name := range order {
			if !slices.ContainsFunc(a.Tests, func(t *testSpec) bool { return t.Name == name }) {
				r := have[name]
				p.actions = append(p.actions, &action{op: '-', kind: "test", key: a.Name + " / " + name, origin: a.origin,
					run: func(ctx context.Context, st *applyState) error {
						return st.c.AgentTests.Delete(ctx, r.rec.AgentID, r.rec.ID, client.IfMatch(r.etag))
					}})
			}
		}
	}
	return nil
}

func (p *plan) createTest(a *agentSpec, t *testSpec, want map[string]any) *action {
	var lines []string
	for _, m := range slices.Sorted(maps.Keys(want)) {
		lines = append(lines, set(m, want[m]))
	}
	return &action{op: '+', kind: "test", key: a.Name + " / " + t.Name, origin: a.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
		id, ok := st.agentID[a.Name]
		if !ok {
			return fmt.Errorf("agent %q has no id", a.Name)
		}
		_, _, err := st.c.AgentTests.Create(ctx, id, t.create(), st.idempotent("test", a.Name+"\x00"+t.Name))
		return err
	}}
}

func (p *plan) changeTest(a *agentSpec, want map[string]any, r *remote[data.AgentTest]) *action {
	have := toTree(client.TestBody(*r.rec)).(map[string]any)
	var lines []string
	for _, m := range slices.Sorted(maps.Keys(want)) {
		if !equalJSON(want[m], have[m]) {
			lines = append(lines, change(m, have[m], want[m]))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &action{op: '~', kind: "test", key: a.Name + " / " + r.rec.Name, origin: a.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
		_, _, err := st.c.AgentTests.Update(ctx, r.rec.AgentID, r.rec.ID, want, client.IfMatch(r.etag))
		return err
	}}
}

// readAllTests reads the tests of every agent read, for pull.
func (cur *current) readAllTests(ctx context.Context, c *client.Client) error {
	cur.tests = map[string][]*data.AgentTest{}
	for _, rs := range cur.agents {
		for _, r := range rs {
			list, err := client.Collect(c.AgentTests.All(ctx, r.rec.ID))
			if err != nil {
				return err
			}
			cur.tests[r.rec.ID] = reversed(list)
		}
	}
	return nil
}
