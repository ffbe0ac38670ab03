package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"name_search_scan_only", testNameSearchScanOnly})
}

// testNameSearchScanOnly: a search by a caller limited to some agents (only) looks at
// and counts its agents alone, so the agents it may not see shape none of its pages. With
// the others counted against MaxScan, a caller whose one agent lay past more than the
// bound of hidden agents got an empty page with a next_cursor, then its agent: how many
// hidden agents there are, told by page shape.
func testNameSearchScanOnly(t *testing.T, open Opener) {
	const ws, kb, maxScan = "ws_scan_only", "kb_scan_only", 2
	s := open(t)
	g := stepIDs()
	var mine []string // oldest first
	update(t, s, func(tx service.Tx) error {
		for i := range 9 {
			a := storedAgent(g.New(data.PrefixAgent), ws, data.AgentStatusDraft)
			a.Name, a.LLMConfig.KnowledgeBaseIDs = fmt.Sprintf("Match %d", i), []string{kb}
			if i%4 == 0 { // the caller's: 0, 4, 8, with three hidden agents between each
				mine = append(mine, a.ID)
			}
			if err := tx.PutAgent(a, ""); err != nil {
				return err
			}
		}
		return nil
	})
	newestFirst := slices.Clone(mine)
	slices.Reverse(newestFirst)
	for _, search := range []service.AgentSearch{{Name: "match", MaxScan: maxScan}, {KnowledgeBaseID: kb, MaxScan: maxScan}} {
		for _, status := range []string{"", data.AgentStatusDraft} {
			t.Run(fmt.Sprintf("name %q kb %q status %q", search.Name, search.KnowledgeBaseID, status), func(t *testing.T) {
				var got []string
				var pages []string
				cursor := ""
				for range 10 {
					var ids []string
					var meta data.Page
					view(t, s, func(tx service.Tx) (err error) {
						ids, meta, err = tx.AgentIDs(ws, status, mine, search, data.PageRequest{PerPage: 3, Cursor: cursor})
						return err
					})
					got = append(got, ids...)
					pages = append(pages, fmt.Sprintf("%d next=%v prev=%v", len(ids), meta.NextCursor != nil, meta.PrevCursor != nil))
					if meta.NextCursor == nil {
						break
					}
					cursor = *meta.NextCursor
				}
				// One page of the caller's three agents: two scanned at most a page would
				// cut it after two, as the bound says, never before.
				want := []string{"2 next=true prev=false", "1 next=false prev=true"}
				if !slices.Equal(got, newestFirst) || !slices.Equal(pages, want) {
					t.Errorf("pages %q of %v, want %q of %v", pages, got, want, newestFirst)
				}
			})
		}
	}
	// A cursor is bound to the agents of the caller it was handed to: another caller's
	// (another limit, or none) is refused, as every list's is, not read under its agents.
	for _, search := range []service.AgentSearch{{}, {Name: "match", MaxScan: maxScan}} {
		var next string
		view(t, s, func(tx service.Tx) error {
			_, meta, err := tx.AgentIDs(ws, "", mine, search, data.PageRequest{PerPage: 1})
			if err != nil || meta.NextCursor == nil {
				t.Fatalf("first page of %q: %v, %v", search.Name, meta.NextCursor, err)
			}
			next = *meta.NextCursor
			return nil
		})
		for _, other := range [][]string{mine[:1], nil} {
			view(t, s, func(tx service.Tx) error {
				_, _, err := tx.AgentIDs(ws, "", other, search, data.PageRequest{PerPage: 1, Cursor: next})
				if data.ErrorCode(err) != data.EINVALID {
					t.Errorf("search %q: a cursor of agents %v read under %v: %v, want a refusal", search.Name, mine, other, err)
				}
				return nil
			})
		}
	}
}
