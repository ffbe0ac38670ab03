package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// planAgents compares each declared agent with the server's. Only the members a file
// writes are compared and sent: a member it leaves out keeps the server's value (on
// create, the default), so pull writes every member to manage all of them.
func (p *plan) planAgents() error {
	for _, a := range p.des.agents {
		r, err := one(p.cur.agents, "agent", a.Name)
		if err != nil {
			return err
		}
		want, err := normalizeGroups(a)
		if err != nil {
			return fmt.Errorf("%s: %w", a.origin, err)
		}
		if r == nil {
			p.actions = append(p.actions, p.createAgent(a, want))
			continue
		}
		if act := p.changeAgent(a, want, r); act != nil {
			p.actions = append(p.actions, act)
		}
	}
	return nil
}

func (p *plan) createAgent(a *agentSpec, want map[string]map[string]any) *action {
	var lines []string
	for _, g := range slices.Sorted(maps.Keys(want)) {
		for _, m := range slices.Sorted(maps.Keys(want[g])) {
			lines = append(lines, set(g+"."+m, shownMember(g, m, want[g][m])))
		}
	}
	if a.KnowledgeBases != nil {
		lines = append(lines, "+ knowledge_bases: "+joinNames(a.KnowledgeBases))
	}
	groups := slices.Collect(maps.Keys(a.Groups))
	if a.KnowledgeBases != nil && !slices.Contains(groups, "llm_config") {
		groups = append(groups, "llm_config")
	}
	return &action{op: '+', kind: "agent", key: a.Name, origin: a.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
		patch, err := agentPatch(a, groups, st)
		if err != nil {
			return err
		}
		rec, etag, err := st.c.Agents.Create(ctx, client.AgentInput{Name: &a.Name, Patch: patch}, st.idempotent("agent", a.Name))
		if err != nil {
			return err
		}
		st.agentID[a.Name] = rec.ID
		return st.maybePublish(a.Name, rec.ID, etag)
	}}
}

func (p *plan) changeAgent(a *agentSpec, want map[string]map[string]any, r *remote[data.Agent]) *action {
	have, _ := toTree(r.rec.AgentConfig).(map[string]any)
	changed := map[string]bool{}
	var lines []string
	for _, g := range slices.Sorted(maps.Keys(want)) {
		haveGroup, _ := have[g].(map[string]any)
		for _, m := range slices.Sorted(maps.Keys(want[g])) {
			w, h := want[g][m], haveGroup[m]
			if sameMember(g, m, w, h) {
				continue
			}
			changed[g] = true
			lines = append(lines, change(g+"."+m, h, shownMember(g, m, w)))
		}
	}
	if a.KnowledgeBases != nil {
		var haveNames []string
		for _, id := range r.rec.LLMConfig.KnowledgeBaseIDs {
			haveNames = append(haveNames, p.cur.kbName[id])
		}
		if !slices.Equal(slices.Sorted(slices.Values(haveNames)), slices.Sorted(slices.Values(a.KnowledgeBases))) {
			changed["llm_config"] = true
			lines = append(lines, "~ knowledge_bases: "+joinNames(haveNames)+" → "+joinNames(a.KnowledgeBases))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	groups := slices.Sorted(maps.Keys(changed))
	id, etag := r.rec.ID, r.etag
	return &action{op: '~', kind: "agent", key: a.Name, origin: a.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
		patch, err := agentPatch(a, groups, st)
		if err != nil {
			return err
		}
		_, newTag, err := st.c.Agents.Update(ctx, id, client.AgentInput{Patch: patch}, client.IfMatch(etag))
		if err != nil {
			return err
		}
		return st.maybePublish(a.Name, id, newTag)
	}}
}

// agentPatch is what an agent create or update sends: each of groups as the file wrote
// it, with llm_config's knowledge_base_ids resolved from the names when the file names
// them.
func agentPatch(a *agentSpec, groups []string, st *applyState) (map[string]map[string]any, error) {
	patch := map[string]map[string]any{}
	for _, g := range groups {
		patch[g] = maps.Clone(a.Groups[g])
		if patch[g] == nil {
			patch[g] = map[string]any{}
		}
	}
	if llm, ok := patch["llm_config"]; ok && a.KnowledgeBases != nil {
		ids := []string{}
		for _, name := range a.KnowledgeBases {
			id, ok := st.kbID[name]
			if !ok {
				return nil, fmt.Errorf("agent %q: knowledge base %q has no id", a.Name, name)
			}
			ids = append(ids, id)
		}
		llm["knowledge_base_ids"] = ids
	}
	return patch, nil
}

// sameMember compares a wanted member with the server's. The server masks api_key, so a
// key counts as unchanged when it masks to what the server shows.
func sameMember(group, member string, want, have any) bool {
	if group == "llm_config" && member == "api_key" {
		w, wok := want.(string)
		h, hok := have.(string)
		if wok && hok {
			return data.MaskSecret(w) == h
		}
		return want == nil && have == nil
	}
	if group == "llm_config" && member == "tools" {
		// The server masks credential headers too: a header counts as unchanged when it
		// masks to what the server shows (a masked one, as pull writes it, keeps the value).
		return data.SameJSON(maskedToolHeaders(want), have)
	}
	return data.SameJSON(want, have)
}

// shownMember masks api_key and the tools' credential headers for printing.
func shownMember(group, member string, v any) any {
	if s, ok := v.(string); ok && group == "llm_config" && member == "api_key" {
		return data.MaskSecret(s)
	}
	if group == "llm_config" && member == "tools" {
		return maskedToolHeaders(v)
	}
	return v
}

// maskedToolHeaders returns tools, llm_config.tools as decoded JSON, with each tool's
// credential headers masked as the server shows them (data.MaskHeader).
func maskedToolHeaders(tools any) any {
	list, ok := tools.([]any)
	if !ok {
		return tools
	}
	out := make([]any, len(list))
	for i, t := range list {
		out[i] = t
		tool, ok := t.(map[string]any)
		if !ok {
			continue
		}
		headers, ok := tool["custom_function_headers"].([]any)
		if !ok {
			continue
		}
		masked := make([]any, len(headers))
		for j, h := range headers {
			masked[j] = h
			if s, ok := h.(string); ok {
				masked[j] = data.MaskHeader(s)
			}
		}
		copied := maps.Clone(tool)
		copied["custom_function_headers"] = masked
		out[i] = copied
	}
	return out
}

// normalizeGroups decodes each member a file gives through its group's Go type and
// encodes it again, as the server stores it (a tool's absent members become null, ...),
// so that comparing with the server's JSON compares meaning. A value of the wrong type
// is an error naming the member.
func normalizeGroups(a *agentSpec) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for g, members := range a.Groups {
		out[g] = map[string]any{}
		for m, v := range members {
			raw, _ := json.Marshal(map[string]any{m: v})
			dst := reflect.New(groupTypes[g])
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields() // a misspelt tool member, say
			dec.UseNumber()             // a default variable 12345678901234567890 stays that
			if err := dec.Decode(dst.Interface()); err != nil {
				return nil, fmt.Errorf("agents[%q].%s.%s: %s", a.Name, g, m, strings.TrimPrefix(jsonFault(err), m+": "))
			}
			tree, _ := toTree(dst.Interface()).(map[string]any)
			out[g][m] = tree[m]
		}
	}
	return out, nil
}
