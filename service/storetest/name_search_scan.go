package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"name_search_scan_bound", testNameSearchScanBound})
}

// nameScanPattern is a search scope's rows, newest first: 'M' a row the search keeps,
// 'x' one it passes over. Beside each lies a row outside the scope that the search would
// keep (another workspace's, status's or agent's), which no page looks at or counts.
const nameScanPattern = "MxxxxMMxMxxx"

// nameScanTrail is what the pages of nameScanPattern are, under a bound of 3 rows looked
// at a page and 2 returned: following next_cursor from the first page, then prev_cursor
// back from the last. A page is its kept rows (M1 the newest) and the cursors it carries.
// A page the bound cuts ends short, even empty, with a cursor past the last row looked
// at; a cursor back is offered when a kept row, or more than the bound, lies that way
// within the bound (bolt/index.go, hasNeighbour), not exactly the bound: M3 M4 has no
// next_cursor on the way back, three rows passed over and the end past M4.
var nameScanTrail = []string{
	"M1 | next", "M2 | prev next", "M3 M4 | prev next", "| prev",
	"| prev", "M3 M4 | prev", "M2 | prev next", "M1 | next",
}

// testNameSearchScanBound: an agents search by name or knowledge base and a numbers
// search by q look at no more than their MaxScan rows a page of the scope walked (the
// workspace's, a status's, an agent's numbers), with the same pages and cursors on every
// engine, forward and back (docs/agents.md, docs/numbers.md). PostgreSQL checked the
// search on every row of the scope, unbounded: its first page here was M1 M2.
func testNameSearchScanBound(t *testing.T, open Opener) {
	const maxScan, perPage = 3, 2
	// ws's rows are the pattern's, scoped's the pattern's among rows of another status
	// and numbers of no agent.
	const ws, scoped, other, kb = "ws_scan", "ws_scan_scoped", "ws_scan_other", "kb_scan"
	type lister func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error)
	s := open(t)
	g := stepIDs()
	label := map[string]string{} // an id the search keeps → M1, M2, … newest first
	var owner string             // the numbers' agent, for the agent_id scope
	update(t, s, func(tx service.Tx) error {
		owner = g.New(data.PrefixAgent)
		if err := tx.PutAgent(storedAgent(owner, scoped, data.AgentStatusPublished), ""); err != nil {
			return err
		}
		seq := 0
		put := func(w, status, name string, kbs []string, agent *string, mark string) error {
			seq++
			a := storedAgent(g.New(data.PrefixAgent), w, status)
			a.Name, a.LLMConfig.KnowledgeBaseIDs = fmt.Sprintf("%s %d", name, seq), kbs
			n := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: w, PhoneNumber: fmt.Sprintf("+1555%07d", seq),
				Provider: "sip", Nickname: fmt.Sprintf("%s desk %d", name, seq), InboundAgentID: agent}
			if err := tx.PutAgent(a, ""); err != nil {
				return err
			}
			if ok, err := tx.InsertNumber(n); err != nil || !ok {
				return fmt.Errorf("insert number %s: %v, %v", n.PhoneNumber, ok, err)
			}
			if mark != "" {
				label[a.ID], label[n.ID] = mark, mark
			}
			return nil
		}
		for i := len(nameScanPattern) - 1; i >= 0; i-- { // oldest first
			name, kbs, mark := "Other", []string(nil), ""
			if nameScanPattern[i] == 'M' {
				name, kbs, mark = "Match", []string{kb}, fmt.Sprintf("M%d", strings.Count(nameScanPattern[:i+1], "M"))
			}
			for _, err := range []error{
				put(ws, data.AgentStatusDraft, name, kbs, nil, mark),
				put(other, data.AgentStatusDraft, "Match", []string{kb}, nil, ""), // another workspace's
				put(scoped, data.AgentStatusDraft, name, kbs, &owner, mark),
				put(scoped, data.AgentStatusPublished, "Match", []string{kb}, nil, ""), // another status's, another agent's number
			} {
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	agents := func(status string, search service.AgentSearch) lister {
		search.MaxScan = maxScan
		return func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			w := ws
			if status != "" {
				w = scoped
			}
			return tx.AgentIDs(w, status, nil, search, req)
		}
	}
	numbers := func(f data.NumberFilter) lister {
		return func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			w := ws
			if f.AgentID != "" {
				w = scoped
			}
			list, p, err := tx.Numbers(w, service.NumberSearch{NumberFilter: f, MaxScan: maxScan}, req)
			return numberIDs(list), p, err
		}
	}
	for _, c := range []struct {
		name string
		list lister
	}{
		{"agents by name", agents("", service.AgentSearch{Name: "MATCH"})},
		{"draft agents by name", agents(data.AgentStatusDraft, service.AgentSearch{Name: "match"})},
		{"agents by knowledge base", agents("", service.AgentSearch{KnowledgeBaseID: kb})},
		{"numbers by nickname", numbers(data.NumberFilter{Q: "match"})},
		{"an agent's numbers by nickname", numbers(data.NumberFilter{Q: "Match", AgentID: owner})},
	} {
		t.Run(c.name, func(t *testing.T) {
			read := func(cursor string) (string, data.Page) {
				var ids []string
				var meta data.Page
				view(t, s, func(tx service.Tx) (err error) {
					ids, meta, err = c.list(tx, data.PageRequest{PerPage: perPage, Cursor: cursor})
					return err
				})
				var parts []string
				for _, id := range ids {
					parts = append(parts, cmpOr(label[id], "unkept "+id))
				}
				desc := strings.Join(parts, " ") + " |"
				if meta.PrevCursor != nil {
					desc += " prev"
				}
				if meta.NextCursor != nil {
					desc += " next"
				}
				return strings.TrimPrefix(desc, " "), meta
			}
			var trail []string
			cursor := ""
			for range 10 {
				desc, meta := read(cursor)
				trail = append(trail, desc)
				if meta.NextCursor == nil {
					break
				}
				cursor = *meta.NextCursor
			}
			for range 10 {
				_, meta := read(cursor)
				if meta.PrevCursor == nil {
					break
				}
				cursor = *meta.PrevCursor
				desc, _ := read(cursor)
				trail = append(trail, desc)
			}
			if !slices.Equal(trail, nameScanTrail) {
				t.Errorf("pages, forward then back:\n got %q\nwant %q", trail, nameScanTrail)
			}
		})
	}
}

// cmpOr is s, or else when s is "".
func cmpOr(s, orElse string) string {
	if s == "" {
		return orElse
	}
	return s
}
