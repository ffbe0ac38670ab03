package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"list_pages_across_filters", testListPagesAcrossFilters})
}

// testListPagesAcrossFilters: the agents, numbers, members, API keys and calls lists,
// each under its filters and a caller's agents, page forward by next_cursor and back by
// prev_cursor to the same rows, newest first, each row once, whatever the page size,
// however another workspace's (user's) rows lie among them. Both engines' pages seek the
// scope's index from a cursor (keyset.within on PostgreSQL); this walks every page such
// a seek starts from, at the edges of the other scope's runs.
func testListPagesAcrossFilters(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	const ws, other = "ws_lists", "ws_other"
	var agents, numbers, members, calls []string
	var keys []int64
	seq := 0
	status := map[string]string{}
	named := map[string]string{}
	boundTo := map[string]string{}
	callAgent := map[string]string{}
	update(t, s, func(tx service.Tx) error {
		for i := range 12 {
			for _, w := range []string{other, ws, other} { // another scope's rows before, among and after
				seq++
				id := g.New(data.PrefixAgent)
				a := storedAgent(id, w, []string{data.AgentStatusDraft, data.AgentStatusPublished}[i%2])
				a.Name = []string{"Sales desk ", "Support line "}[i%3/2] + fmt.Sprint(i)
				if err := tx.PutAgent(a, ""); err != nil {
					return err
				}
				user := g.New(data.PrefixUser)
				if err := tx.PutMember(&data.MemberRecord{WorkspaceID: w, UserID: user, Role: data.RoleMember}); err != nil {
					return err
				}
				k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "K", CreatedAt: data.NewTime(time.Unix(int64(1e9+i), 0))}, UserID: "usr_" + w, WorkspaceID: w, Kind: data.TokenAPIKey, SecretHash: []byte{1}}
				if err := tx.InsertAPIKey(k); err != nil {
					return err
				}
				n := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: w, PhoneNumber: fmt.Sprintf("+1555%07d", seq), Provider: "sip",
					Nickname: []string{"Front desk", "Back office", "Night line"}[i%3]}
				if i%2 == 0 {
					n.InboundAgentID = &id
				}
				if ok, err := tx.InsertNumber(n); err != nil || !ok {
					return fmt.Errorf("insert number %s: %v, %v", n.PhoneNumber, ok, err)
				}
				c := newCall(g, w, id, []string{data.DirectionInbound, data.DirectionWeb}[i%2], data.CallRegistered)
				if err := tx.InsertCall(c); err != nil {
					return err
				}
				if w != ws {
					continue
				}
				agents, members, keys, numbers, calls = append(agents, id), append(members, user), append(keys, k.ID), append(numbers, n.ID), append(calls, c.ID)
				status[id], named[id], callAgent[c.ID] = a.Status, a.Name, id
				if n.InboundAgentID != nil {
					boundTo[n.ID] = id
				}
			}
		}
		return nil
	})
	where := func(ids []string, keep func(string) bool) []string {
		out := []string{}
		for i := len(ids) - 1; i >= 0; i-- {
			if keep(ids[i]) {
				out = append(out, ids[i])
			}
		}
		return out
	}
	all := func(string) bool { return true }
	some := []string{agents[1], agents[4], agents[5], agents[8], agents[10]}
	isSome := func(id string) bool { return slices.Contains(some, id) }
	draft := func(id string) bool { return status[id] == data.AgentStatusDraft }
	support := func(id string) bool { return strings.Contains(named[id], "Support") }
	for _, per := range []int{1, 2, 5} {
		agentList := func(st string, only []string, name string) func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			return func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
				return tx.AgentIDs(ws, st, only, service.AgentSearch{Name: name}, req)
			}
		}
		checkPages(t, s, "agents", per, agentList("", nil, ""), where(agents, all))
		checkPages(t, s, "draft agents", per, agentList(data.AgentStatusDraft, nil, ""), where(agents, draft))
		checkPages(t, s, "some agents", per, agentList("", some, ""), where(agents, isSome))
		checkPages(t, s, "agents named support", per, agentList("", nil, "SUPPORT"), where(agents, support))
		checkPages(t, s, "some draft agents named support", per, agentList(data.AgentStatusDraft, some, "support"),
			where(agents, func(id string) bool { return isSome(id) && draft(id) && support(id) }))

		numberList := func(f data.NumberFilter) func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			return func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
				list, p, err := tx.Numbers(ws, service.NumberSearch{NumberFilter: f}, req)
				return numberIDs(list), p, err
			}
		}
		checkPages(t, s, "numbers", per, numberList(data.NumberFilter{}), where(numbers, all))
		checkPages(t, s, "numbers of an agent", per, numberList(data.NumberFilter{AgentID: agents[4]}), where(numbers, func(id string) bool { return boundTo[id] == agents[4] }))

		checkPages(t, s, "members", per, func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			list, p, err := tx.MemberPage(ws, req)
			out := make([]string, len(list))
			for i, m := range list {
				out[i] = m.UserID
			}
			return out, p, err
		}, where(members, all))
		keyIDs := make([]string, len(keys))
		for i, k := range keys {
			keyIDs[i] = fmt.Sprint(k)
		}
		keyList := func(page func(tx service.Tx, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error)) func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			return func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
				list, p, err := page(tx, req)
				out := make([]string, len(list))
				for i, k := range list {
					out[i] = fmt.Sprint(k.ID)
				}
				return out, p, err
			}
		}
		checkPages(t, s, "a workspace's API keys", per, keyList(func(tx service.Tx, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
			return tx.WorkspaceAPIKeyPage(ws, req)
		}), where(keyIDs, all))
		checkPages(t, s, "a user's API keys", per, keyList(func(tx service.Tx, req data.PageRequest) ([]*data.APIKeyRecord, data.Page, error) {
			return tx.APIKeyPage("usr_"+ws, req)
		}), where(keyIDs, all))

		callList := func(only []string, f data.CallFilter) func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			return func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
				list, p, err := tx.Calls(ws, only, f, req)
				out := make([]string, len(list))
				for i, c := range list {
					out[i] = c.ID
				}
				return out, p, err
			}
		}
		web := func(id string) bool { return slices.Index(calls, id)%2 == 1 }
		checkPages(t, s, "calls", per, callList(nil, data.CallFilter{}), where(calls, all))
		checkPages(t, s, "web calls", per, callList(nil, data.CallFilter{Direction: data.DirectionWeb}), where(calls, web))
		checkPages(t, s, "calls of some agents", per, callList(some, data.CallFilter{}), where(calls, func(id string) bool { return isSome(callAgent[id]) }))
		checkPages(t, s, "web calls of some agents", per, callList(some, data.CallFilter{Direction: data.DirectionWeb}),
			where(calls, func(id string) bool { return web(id) && isSome(callAgent[id]) }))
		checkPages(t, s, "calls of an agent", per, callList(nil, data.CallFilter{AgentID: agents[5]}), where(calls, func(id string) bool { return callAgent[id] == agents[5] }))
	}
}

// checkPages walks list by next_cursor from its first page, then back by prev_cursor from
// the last, and checks both walks read want, newest first: each page within per, each row
// once. A page may come back short or empty with a cursor (a scan bound).
func checkPages(t *testing.T, s service.Store, name string, per int, list func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error), want []string) {
	t.Helper()
	read := func(cursor string) ([]string, data.Page) {
		var ids []string
		var page data.Page
		view(t, s, func(tx service.Tx) error {
			var err error
			ids, page, err = list(tx, data.PageRequest{PerPage: per, Cursor: cursor})
			return err
		})
		if len(ids) > per {
			t.Fatalf("%s: a page of %d holds %d", name, per, len(ids))
		}
		return ids, page
	}
	limit := 4 * (len(want) + 2)
	var forward []string
	ids, page := read("")
	for steps := 0; ; steps++ {
		forward = append(forward, ids...)
		if page.NextCursor == nil {
			break
		}
		if steps == limit {
			t.Fatalf("%s by %d: the walk forward does not end", name, per)
		}
		ids, page = read(*page.NextCursor)
	}
	back := ids
	for steps := 0; page.PrevCursor != nil; steps++ {
		if steps == limit {
			t.Fatalf("%s by %d: the walk back does not end", name, per)
		}
		ids, page = read(*page.PrevCursor)
		back = append(slices.Clone(ids), back...)
	}
	if len(want) == 0 {
		t.Fatalf("%s: the case lists nothing", name) // a walk of nothing proves nothing
	}
	if !slices.Equal(forward, want) || !slices.Equal(back, want) {
		t.Errorf("%s by %d:\n forward %v\n back    %v\n want    %v", name, per, forward, back, want)
	}
}
