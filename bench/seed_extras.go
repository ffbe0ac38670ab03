package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// extras sizes what seedExtras adds to a bulk-seeded workspace, for the walk of a big
// workspace's lists (docs/performance.md, "A big workspace's walk"). Zero skips a kind.
type extras struct {
	members, numbers, campaigns, recipients, kbs, updates int
}

// seedExtras adds, through the services as the owner, what a workspace holds beside its
// agents and calls: members (developers limited to 3 agents each; the first one's API key
// is saved as DevToken), each agent published once then updated x.updates times
// (versions and events; a campaign needs a published agent), numbers, campaigns of
// recipients (scheduled a year ahead, so none dials) and knowledge bases of text sources.
func seedExtras(ctx context.Context, svc *service.Services, s *seeded, x extras, logf func(string, ...any)) error {
	st, ws, pctx := s.st, s.ws, s.pctx
	for i := range x.members {
		u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: fmt.Sprintf("Dev %d", i), Email: fmt.Sprintf("dev%d@voiceapi.local", i), Password: "bench-password-1"})
		if err != nil {
			return fmt.Errorf("member %d: %w", i, err)
		}
		limit := []string{st.Agents[(3*i)%len(st.Agents)], st.Agents[(3*i+1)%len(st.Agents)], st.Agents[(3*i+2)%len(st.Agents)]}
		if _, err := svc.WorkspaceUsers.AddWorkspaceUser(pctx, ws, data.WorkspaceUserAdd{ID: u.ID, Role: data.RoleDeveloper, AgentIDs: data.Some(limit)}); err != nil {
			return fmt.Errorf("member %d: %w", i, err)
		}
		if i == 0 {
			if _, st.DevToken, err = svc.Auth.CreateAPIKeyFor(ctx, u.ID, ws, data.APIKeyCreate{Name: "bench dev"}); err != nil {
				return err
			}
			st.DevAgents = limit
		}
	}
	logf("  %d members", x.members)
	if x.updates > 0 {
		for i, id := range st.Agents {
			if err := svc.Agents.PublishAgent(pctx, id, data.PublishRequest{}); err != nil {
				return fmt.Errorf("publish %d: %w", i, err)
			}
			for u := range x.updates {
				if _, err := svc.Agents.UpdateAgent(pctx, id, data.AgentUpdate{Name: data.Some(fmt.Sprintf("Agent %d v%d", i, u+2))}); err != nil {
					return fmt.Errorf("update %d: %w", i, err)
				}
			}
		}
		logf("  %d agents published, %d updates each", len(st.Agents), x.updates)
	}
	var numbers []string
	for i := range x.numbers {
		agent := st.Agents[i%len(st.Agents)]
		n, err := svc.Numbers.CreateNumber(pctx, data.NumberCreate{PhoneNumber: fmt.Sprintf("+1415%07d", 1000000+i), Nickname: fmt.Sprintf("Line %d", i), Provider: "twilio", InboundAgentID: &agent, OutboundAgentID: &agent})
		if err != nil {
			return fmt.Errorf("number %d: %w", i, err)
		}
		numbers = append(numbers, n.ID)
	}
	logf("  %d numbers", x.numbers)
	start := data.NewTime(time.Now().AddDate(1, 0, 0))
	utc, one := "UTC", 1
	window := data.CampaignWindow{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:00"}
	for i := range x.campaigns {
		rs := make([]data.RecipientInput, x.recipients)
		for j := range rs {
			rs[j].PhoneNumber = fmt.Sprintf("+1212%03d%04d", 200+i, j)
		}
		in := data.CampaignCreate{Name: fmt.Sprintf("Campaign %d", i), AgentID: st.Agents[i%len(st.Agents)], NumberID: numbers[i%len(numbers)], StartAt: &start, Recipients: rs,
			Timezone: &utc, Window: &window, MaxConcurrent: &one, Retry: &data.CampaignRetry{On: []string{}, MaxAttempts: 1, BackoffMinutes: 60}}
		if _, err := svc.Campaigns.CreateCampaign(pctx, in); err != nil {
			return fmt.Errorf("campaign %d: %w", i, err)
		}
	}
	logf("  %d campaigns of %d recipients", x.campaigns, x.recipients)
	for i := range x.kbs {
		texts := make([]data.TextInput, 10)
		for j := range texts {
			var b strings.Builder
			for k := range 40 {
				fmt.Fprintf(&b, "Section %d.%d.%d: the refund policy for plan %d covers returns within %d days of delivery. ", i, j, k, k, 10+k)
			}
			texts[j] = data.TextInput{Title: fmt.Sprintf("Doc %d.%d", i, j), Content: b.String()}
		}
		if _, err := svc.KnowledgeBases.CreateKnowledgeBase(pctx, data.KnowledgeBaseCreate{Name: fmt.Sprintf("KB %d", i), Texts: texts}); err != nil {
			return fmt.Errorf("knowledge base %d: %w", i, err)
		}
	}
	logf("  %d knowledge bases", x.kbs)
	return nil
}
