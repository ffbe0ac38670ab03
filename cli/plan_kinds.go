package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// planKnowledgeBases compares sources: texts by title and content, urls by url, files by
// name and SHA-256. A changed source is deleted and added again.
func (p *plan) planKnowledgeBases() error {
	for _, kb := range p.des.kbs {
		r, err := one(p.cur.kbs, "knowledge base", kb.Name)
		if err != nil {
			return err
		}
		if r == nil {
			p.actions = append(p.actions, createKB(kb))
			continue
		}
		if act := changeKB(kb, r); act != nil {
			p.actions = append(p.actions, act)
		}
	}
	return nil
}

func textKey(title, content string) string { return "t" + title + "\x00" + content }
func fileKey(name, sha string) string      { return name + "\x00" + sha }

func sourceLines(kb *kbSpec) []string {
	var lines []string
	for _, t := range kb.Texts {
		lines = append(lines, set("texts", t.Title))
	}
	for _, u := range kb.URLs {
		lines = append(lines, set("urls", u))
	}
	for _, f := range kb.uploads {
		lines = append(lines, set("files", f.Filename))
	}
	return lines
}

func createKB(kb *kbSpec) *action {
	return &action{op: '+', kind: "knowledge base", key: kb.Name, origin: kb.origin, lines: sourceLines(kb), run: func(ctx context.Context, st *applyState) error {
		rec, _, err := st.c.KnowledgeBases.Create(ctx, data.KnowledgeBaseCreate{Name: kb.Name, Texts: kb.Texts, URLs: kb.URLs}, st.idempotent("knowledge base", kb.Name))
		if err != nil {
			return err
		}
		st.kbID[kb.Name] = rec.ID
		if len(kb.uploads) > 0 {
			_, _, err = st.c.KnowledgeBases.AddSources(ctx, rec.ID, data.SourcesAdd{Files: kb.uploads}, st.idempotent("knowledge base files", kb.Name))
		}
		return err
	}}
}

// sourceDelete is one source to remove.
type sourceDelete struct{ typ, id string }

func changeKB(kb *kbSpec, r *remote[data.KnowledgeBase]) *action {
	var add data.SourcesAdd
	var dels []sourceDelete
	var lines []string
	have := map[string]bool{}
	for _, t := range r.rec.Texts {
		k := textKey(t.Title, t.Content)
		if !slices.ContainsFunc(kb.Texts, func(w data.TextInput) bool { return textKey(w.Title, w.Content) == k }) || have[k] {
			dels = append(dels, sourceDelete{data.SourceTexts, t.ID})
			lines = append(lines, fmt.Sprintf("- texts: %s", shown(t.Title)))
		}
		have[k] = true
	}
	for _, t := range kb.Texts {
		if k := textKey(t.Title, t.Content); !have[k] {
			have[k] = true // a text written twice is added once
			add.Texts = append(add.Texts, t)
			lines = append(lines, set("texts", t.Title))
		}
	}
	for _, u := range r.rec.URLs {
		if !slices.Contains(kb.URLs, u.URL) || have["u"+u.URL] {
			dels = append(dels, sourceDelete{data.SourceURLs, u.ID})
			lines = append(lines, fmt.Sprintf("- urls: %s", shown(u.URL)))
		}
		have["u"+u.URL] = true
	}
	for _, u := range kb.URLs {
		if !have["u"+u] {
			have["u"+u] = true
			add.URLs = append(add.URLs, u)
			lines = append(lines, set("urls", u))
		}
	}
	for _, f := range r.rec.Files {
		k := fileKey(f.Filename, f.SHA256)
		if !slices.ContainsFunc(kb.uploads, func(w data.FileUpload) bool { return fileKey(w.Filename, fileDigest(w.Content)) == k }) || have["f"+k] {
			dels = append(dels, sourceDelete{data.SourceFiles, f.ID})
			lines = append(lines, fmt.Sprintf("- files: %s", shown(f.Filename)))
		}
		have["f"+k] = true
	}
	for _, f := range kb.uploads {
		if k := "f" + fileKey(f.Filename, fileDigest(f.Content)); !have[k] {
			have[k] = true
			add.Files = append(add.Files, f)
			lines = append(lines, set("files", f.Filename))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	id, etag := r.rec.ID, r.etag
	return &action{op: '~', kind: "knowledge base", key: kb.Name, origin: kb.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
		tag := etag
		if len(dels) == 0 {
			// Adding sources does not take If-Match on the server: read the ETag again
			// just before, so a change made since the plan still stops the apply.
			_, now, err := st.c.KnowledgeBases.Get(ctx, id)
			if err != nil {
				return err
			}
			if now != tag {
				return &client.Error{StatusCode: 412, Code: data.EPRECONDITION, Message: "The knowledge base has changed since it was read."}
			}
		}
		for _, d := range dels {
			_, next, err := st.c.KnowledgeBases.DeleteSource(ctx, id, d.typ, d.id, client.IfMatch(tag))
			if err != nil {
				return err
			}
			tag = next
		}
		if len(add.Texts)+len(add.URLs)+len(add.Files) > 0 {
			_, _, err := st.c.KnowledgeBases.AddSources(ctx, id, add, st.idempotent("knowledge base sources", kb.Name))
			return err
		}
		return nil
	}}
}

// planNumbers compares nickname, provider and the bound agents (by name).
func (p *plan) planNumbers() error {
	for _, n := range p.des.numbers {
		r := p.cur.numbers[n.PhoneNumber]
		if r == nil {
			p.actions = append(p.actions, createNumber(n))
			continue
		}
		var lines []string
		var upd data.NumberUpdate
		if r.rec.Nickname != n.Nickname {
			lines = append(lines, change("nickname", r.rec.Nickname, n.Nickname))
			upd.Nickname = data.Some(n.Nickname)
		}
		if r.rec.Provider != n.Provider {
			lines = append(lines, change("provider", r.rec.Provider, n.Provider))
			upd.Provider = data.Some(n.Provider)
		}
		inbound := p.agentNameOf(r.rec.InboundAgentID)
		outbound := p.agentNameOf(r.rec.OutboundAgentID)
		if !equalJSON(inbound, n.InboundAgent) {
			lines = append(lines, change("inbound_agent", inbound, n.InboundAgent))
		}
		if !equalJSON(outbound, n.OutboundAgent) {
			lines = append(lines, change("outbound_agent", outbound, n.OutboundAgent))
		}
		if len(lines) == 0 {
			continue
		}
		n, id, etag := n, r.rec.ID, r.etag
		setIn, setOut := !equalJSON(inbound, n.InboundAgent), !equalJSON(outbound, n.OutboundAgent)
		p.actions = append(p.actions, &action{op: '~', kind: "number", key: n.PhoneNumber, origin: n.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
			u := upd
			var err error
			if setIn {
				u.InboundAgentID.Set = true
				if u.InboundAgentID.V, err = st.agentRef(n.InboundAgent); err != nil {
					return err
				}
			}
			if setOut {
				u.OutboundAgentID.Set = true
				if u.OutboundAgentID.V, err = st.agentRef(n.OutboundAgent); err != nil {
					return err
				}
			}
			_, _, err = st.c.Numbers.Update(ctx, id, u, client.IfMatch(etag))
			return err
		}})
	}
	return nil
}

func (p *plan) agentNameOf(id *string) *string {
	if id == nil {
		return nil
	}
	name, ok := p.cur.agentName[*id]
	if !ok {
		name = *id
	}
	return &name
}

func createNumber(n *numberSpec) *action {
	lines := []string{set("nickname", n.Nickname), set("provider", n.Provider)}
	if n.InboundAgent != nil {
		lines = append(lines, set("inbound_agent", *n.InboundAgent))
	}
	if n.OutboundAgent != nil {
		lines = append(lines, set("outbound_agent", *n.OutboundAgent))
	}
	return &action{op: '+', kind: "number", key: n.PhoneNumber, origin: n.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
		in := data.NumberCreate{PhoneNumber: n.PhoneNumber, Nickname: n.Nickname, Provider: n.Provider}
		var err error
		if in.InboundAgentID, err = st.agentRef(n.InboundAgent); err != nil {
			return err
		}
		if in.OutboundAgentID, err = st.agentRef(n.OutboundAgent); err != nil {
			return err
		}
		_, _, err = st.c.Numbers.Create(ctx, in, st.idempotent("number", n.PhoneNumber))
		return err
	}}
}

// planWebhooks compares events, description and enabled (true when the file omits it).
func (p *plan) planWebhooks() error {
	for _, w := range p.des.webhooks {
		r, err := one(p.cur.webhooks, "webhook", w.URL)
		if err != nil {
			return err
		}
		enabled := w.Enabled == nil || *w.Enabled
		if r == nil {
			w := w
			lines := []string{set("events", w.Events), set("description", w.Description), set("enabled", enabled)}
			p.actions = append(p.actions, &action{op: '+', kind: "webhook", key: w.URL, origin: w.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
				res, err := st.c.Webhooks.Create(ctx, data.WebhookCreate{URL: w.URL, Events: w.Events, Description: w.Description, Enabled: &enabled}, st.idempotent("webhook", w.URL))
				if err == nil {
					fmt.Fprintf(st.out, "  webhook %s: signing secret (shown once): %s\n", w.URL, res.Secret)
				}
				return err
			}})
			continue
		}
		var lines []string
		var upd data.WebhookUpdate
		if !slices.Equal(slices.Sorted(slices.Values(r.rec.Events)), slices.Sorted(slices.Values(w.Events))) {
			lines = append(lines, change("events", r.rec.Events, w.Events))
			upd.Events = data.Some(w.Events)
		}
		if r.rec.Description != w.Description {
			lines = append(lines, change("description", r.rec.Description, w.Description))
			upd.Description = data.Some(w.Description)
		}
		if r.rec.Enabled != enabled {
			lines = append(lines, change("enabled", r.rec.Enabled, enabled))
			upd.Enabled = data.Some(enabled)
		}
		if len(lines) == 0 {
			continue
		}
		id, etag := r.rec.ID, r.etag
		p.actions = append(p.actions, &action{op: '~', kind: "webhook", key: w.URL, origin: w.origin, lines: lines, run: func(ctx context.Context, st *applyState) error {
			_, _, err := st.c.Webhooks.Update(ctx, id, upd, client.IfMatch(etag))
			return err
		}})
	}
	return nil
}

// planDeletes lists what the server has beyond the files: deleted with --prune (numbers
// first, which name agents; then agents, which name knowledge bases), counted otherwise.
func (p *plan) planDeletes(prune bool) {
	declared := map[string]bool{}
	for _, a := range p.des.agents {
		declared["agent\x00"+a.Name] = true
	}
	for _, kb := range p.des.kbs {
		declared["knowledge base\x00"+kb.Name] = true
	}
	for _, n := range p.des.numbers {
		declared["number\x00"+n.PhoneNumber] = true
	}
	for _, w := range p.des.webhooks {
		declared["webhook\x00"+w.URL] = true
	}
	del := func(kind, key, id, etag string, remove func(ctx context.Context, c *client.Client, id string, opts ...client.RequestOption) error) {
		if declared[kind+"\x00"+key] {
			return
		}
		if !prune {
			p.unmanaged++
			return
		}
		p.actions = append(p.actions, &action{op: '-', kind: kind, key: key, run: func(ctx context.Context, st *applyState) error {
			return remove(ctx, st.c, id, client.IfMatch(etag))
		}})
	}
	for _, key := range p.cur.numberOrder {
		r := p.cur.numbers[key]
		del("number", key, r.rec.ID, r.etag, func(ctx context.Context, c *client.Client, id string, o ...client.RequestOption) error {
			return c.Numbers.Delete(ctx, id, o...)
		})
	}
	for _, key := range p.cur.agentOrder {
		for _, r := range p.cur.agents[key] {
			del("agent", key, r.rec.ID, r.etag, func(ctx context.Context, c *client.Client, id string, o ...client.RequestOption) error {
				return c.Agents.Delete(ctx, id, o...)
			})
		}
	}
	for _, key := range p.cur.kbOrder {
		for _, r := range p.cur.kbs[key] {
			del("knowledge base", key, r.rec.ID, r.etag, func(ctx context.Context, c *client.Client, id string, o ...client.RequestOption) error {
				return c.KnowledgeBases.Delete(ctx, id, o...)
			})
		}
	}
	for _, key := range p.cur.webhookOrder {
		for _, r := range p.cur.webhooks[key] {
			del("webhook", key, r.rec.ID, r.etag, func(ctx context.Context, c *client.Client, id string, o ...client.RequestOption) error {
				return c.Webhooks.Delete(ctx, id, o...)
			})
		}
	}
}
