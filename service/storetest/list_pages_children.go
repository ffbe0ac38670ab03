package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"list_pages_of_a_parent", testListPagesOfAParent})
}

// testListPagesOfAParent: the lists of one parent record (an agent's versions, tests and
// test runs, a webhook's deliveries, a campaign's recipients, a user's workspaces) and a
// workspace's knowledge bases and webhooks page forward and back to the same rows, newest
// first, each once, under their filters, however another parent's rows lie among them:
// as list_pages_across_filters does for the workspace lists.
func testListPagesOfAParent(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	const ws, otherWS = "ws_parent", "ws_parent_other"
	const agent, other = "agt_01JD7000000000000000000001", "agt_01JD7000000000000000000002"
	const user, otherUser = "usr_parent", "usr_parent_other"
	var versions, tests, runs, failedRuns, deliveries, failedDeliveries, recipients, workspaces, kbs, hooks []string
	var hook, otherHook *data.WebhookRecord
	var campaign *data.Campaign
	update(t, s, func(tx service.Tx) error {
		hook, otherHook = webhookRecord(ws), webhookRecord(ws)
		for _, w := range []*data.WebhookRecord{hook, otherHook} {
			if err := tx.PutWebhook(w); err != nil {
				return err
			}
		}
		for i := range 9 {
			at := t0.Add(time.Duration(i) * time.Minute)
			for _, a := range []string{other, agent, other} {
				n := 3*i + len(versions) // a version number of its agent's, increasing
				if err := tx.PutAgentVersion(&data.AgentVersion{AgentID: a, VersionNumber: n + 1, Name: "v"}); err != nil {
					return err
				}
				test := storedTest(g, ws, a, fmt.Sprint("test ", i), at)
				if err := tx.PutAgentTest(test); err != nil {
					return err
				}
				rev := `"r"`
				run := storedRun(g, ws, a, &rev, nil, []data.AgentTest{*test}, at)
				if i%3 == 1 {
					finished := data.NewTime(at)
					run.Status, run.FinishedAt = data.TestFailed, &finished
				}
				if err := tx.PutTestRun(run); err != nil {
					return err
				}
				w := otherHook
				if a == agent {
					w = hook
				}
				d := &data.Delivery{ID: g.New(data.PrefixDelivery), WebhookID: w.ID, EventID: "evt_x", EventType: data.EventAgentCreated,
					Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: data.NewTime(at)}
				if i%2 == 1 {
					d.EventType = data.EventAgentDeleted
				}
				if err := tx.PutDelivery(d); err != nil {
					return err
				}
				wsID := g.New(data.PrefixWorkspace)
				if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: wsID, Name: "W", CreatedAt: data.NewTime(at), UpdatedAt: data.NewTime(at)}}); err != nil {
					return err
				}
				member := otherUser
				if a == agent {
					member = user
				}
				if err := tx.PutMember(&data.MemberRecord{WorkspaceID: wsID, UserID: member, Role: data.RoleOwner}); err != nil {
					return err
				}
				kbWS := otherWS
				if a == agent {
					kbWS = ws
				}
				kb := &data.KnowledgeBase{ID: g.New(data.PrefixKnowledgeBase), WorkspaceID: kbWS, Name: "KB", CreatedAt: data.NewTime(at), UpdatedAt: data.NewTime(at)}
				if err := tx.InsertKnowledgeBase(kb); err != nil {
					return err
				}
				wh := webhookRecord(kbWS)
				if err := tx.PutWebhook(wh); err != nil {
					return err
				}
				if a != agent {
					continue
				}
				versions = append([]string{fmt.Sprint(n + 1)}, versions...)
				tests, runs = append([]string{test.ID}, tests...), append([]string{run.ID}, runs...)
				if run.Status == data.TestFailed {
					failedRuns = append([]string{run.ID}, failedRuns...)
				}
				deliveries = append([]string{d.ID}, deliveries...)
				if d.EventType == data.EventAgentDeleted {
					failedDeliveries = append([]string{d.ID}, failedDeliveries...)
				}
				workspaces, kbs, hooks = append([]string{wsID}, workspaces...), append([]string{kb.ID}, kbs...), append([]string{wh.ID}, hooks...)
			}
		}
		hooks = append(hooks, otherHook.ID, hook.ID) // the two made first are ws's too
		var rs []*data.Recipient
		campaign, rs = campaignFixture(g, ws, t0)
		otherCampaign, others := campaignFixture(g, ws, t0)
		for i := range 8 {
			for _, list := range []*[]*data.Recipient{&others, &rs, &others} {
				c := campaign
				if list == &others {
					c = otherCampaign
				}
				at := data.NewTime(t0)
				*list = append(*list, &data.Recipient{ID: g.New(data.PrefixRecipient), CampaignID: c.ID, WorkspaceID: ws,
					PhoneNumber: fmt.Sprintf("+1415556%04d", 3*i+len(*list)), State: data.RecipientPending, NextAt: &at,
					Variables: map[string]any{}, Attempts: []data.RecipientAttempt{}})
			}
		}
		for _, r := range rs {
			recipients = append([]string{r.ID}, recipients...)
		}
		campaign.Counts.Total, campaign.Counts.Pending = int64(len(rs)), int64(len(rs))
		otherCampaign.Counts.Total, otherCampaign.Counts.Pending = int64(len(others)), int64(len(others))
		if err := tx.InsertCampaign(campaign, rs); err != nil {
			return err
		}
		return tx.InsertCampaign(otherCampaign, others)
	})
	type lister = func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error)
	ids := func(n int, id func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = id(i)
		}
		return out
	}
	lists := []struct {
		name string
		list lister
		want []string
	}{
		{"an agent's versions", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.AgentVersions(agent, req)
			return ids(len(l), func(i int) string { return fmt.Sprint(l[i].VersionNumber) }), p, err
		}, versions},
		{"an agent's tests", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.AgentTestPage(agent, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, tests},
		{"an agent's test runs", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.TestRunPage(agent, service.StateSelection{}, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, runs},
		{"an agent's failed test runs", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.TestRunPage(agent, service.StateSelection{Filter: "failed", States: []string{data.TestFailed}}, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, failedRuns},
		{"a webhook's deliveries", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.Deliveries(hook.ID, service.DeliveryFilter{}, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, deliveries},
		{"a webhook's deliveries of a type", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.Deliveries(hook.ID, service.DeliveryFilter{Types: []string{data.EventAgentDeleted}}, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, failedDeliveries},
		{"a campaign's recipients", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.Recipients(campaign.ID, service.StateSelection{}, req)
			return recipientIDs(l), p, err
		}, recipients},
		{"a user's workspaces", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.WorkspacePage(user, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, workspaces},
		{"a workspace's knowledge bases", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.KnowledgeBasePage(ws, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, kbs},
		{"a workspace's webhooks", func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
			l, p, err := tx.Webhooks(ws, req)
			return ids(len(l), func(i int) string { return l[i].ID }), p, err
		}, hooks},
	}
	for _, per := range []int{1, 2, 4} {
		for _, l := range lists {
			checkPages(t, s, l.name, per, l.list, l.want)
		}
	}
}
