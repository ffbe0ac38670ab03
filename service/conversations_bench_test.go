package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// instantModel answers at once: what a turn costs beyond it is the engine's own.
type instantModel struct{}

func (instantModel) Provider() string { return data.LLMInternal }

func (instantModel) Complete(_ context.Context, _ llm.Request, onText func(string) error) (*llm.Reply, error) {
	const text = "The pro plan costs 20 euros a month and includes support."
	if onText != nil {
		if err := onText(text); err != nil {
			return nil, err
		}
	}
	return &llm.Reply{Text: text, StopReason: "stop", Usage: llm.Usage{InputTokens: 300, OutputTokens: 12}}, nil
}

// BenchmarkConversationTurn measures one message's answer with a model that answers at
// once: the lease's write, the configuration read and its variables substituted, the
// prompt assembled with the chunks retrieved from a knowledge base of 1,000 texts, the
// tool schemas of six tools built, and the turn's write. Conversations run 20 turns each
// (their history grows as in use); the bbolt file is fsynced (sync=true) or not. It
// reports the p50 and p99 of the turns.
func BenchmarkConversationTurn(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			db := testkit.OpenDB(b, func(o *bolt.Options) { o.NoSync = !sync })
			svc := servicesOn(b, db, db, nil)
			svc.Conversations.Configure(service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return instantModel{}, nil }})
			u := mustUser(b, svc, "bench@example.com")
			ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
			agentID := benchConversationAgent(b, svc, ctx)
			start := func() string {
				c, err := svc.Conversations.StartConversation(ctx, agentID, data.ConversationStart{Version: data.ConversationVersion{Draft: true},
					Variables: map[string]any{"shop": "Acme", "customer": "Ada"}}, data.ConversationObserver{})
				if err != nil {
					b.Fatal(err)
				}
				return c.ID
			}
			msg := data.ConversationMessage{Content: "How much is the pro plan, and does it include support?"}
			lat := make([]time.Duration, 0, b.N)
			id, turns := start(), 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if turns == 20 {
					b.StopTimer()
					id, turns = start(), 0
					b.StartTimer()
				}
				t0 := time.Now()
				if _, err := svc.Conversations.SendMessage(ctx, id, msg, data.ConversationObserver{}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				turns++
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// benchConversationAgent is an agent with a prompt using two variables, six tools (one of
// each type) and a knowledge base of 1,000 texts.
func benchConversationAgent(b *testing.B, svc *service.Services, ctx context.Context) string {
	kb, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Plans"})
	if err != nil {
		b.Fatal(err)
	}
	for done := 0; done < 1000; done += 100 {
		var in data.SourcesAdd
		for j := range 100 {
			in.Texts = append(in.Texts, data.TextInput{Content: fmt.Sprintf("Plan %d: the pro plan costs %d euros a month; support is included on weekdays. %s",
				done+j, 10+j, strings.Repeat("Details of the plan and its terms. ", 8))})
		}
		if _, err := svc.KnowledgeBases.AddSources(ctx, kb.ID, in); err != nil {
			b.Fatal(err)
		}
	}
	desc := "Look up an order for {{customer}}"
	params := `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`
	cfg := data.DefaultAgentConfig()
	cfg.PromptConfig.Prompt = strings.Repeat("You sell plans for {{shop}} to {{customer}}. Be brief and friendly. ", 20)
	cfg.LLMConfig = data.LLMConfig{Provider: data.LLMInternal, Model: "llama3.2", Temperature: cfg.LLMConfig.Temperature,
		BaseURL: "http://127.0.0.1:11434/v1", KnowledgeBaseIDs: []string{kb.ID}, Tools: []*data.Tool{
			{Name: "hang_up", Type: data.ToolEndCall},
			{Name: "transfer", Type: data.ToolTransferCall, PhoneDirectory: []data.PhoneDirectoryEntry{
				{Name: "Sales", PhoneNumber: "+15550100", Description: "buying", TransferType: "cold"},
				{Name: "Billing", PhoneNumber: "+15550101", Description: "invoices", TransferType: "warm"}}},
			{Name: "press", Type: data.ToolPressIVR},
			{Name: "sms", Type: data.ToolSendSMS, ContentType: "static", Content: "Thanks, {{customer}}!"},
			{Name: "note", Type: data.ToolExtractDynamicVariable, Variables: []data.ToolVariable{
				{Type: "enum", Name: "plan", Description: "plan", Choices: []string{"basic", "pro"}}, {Type: "number", Name: "seats", Description: "seats"}}},
			{Name: "lookup", Type: data.ToolCustomFunction, Description: &desc, HTTPMethod: "POST", APIEndpoint: "https://api.example.com/orders", CustomFunctionParameters: &params},
		}}
	body, _ := json.Marshal(map[string]any{"name": "Bench", "llm_config": cfg.LLMConfig, "prompt_config": cfg.PromptConfig})
	var in data.AgentCreate
	if err := strictjson.Decode(body, &in); err != nil {
		b.Fatal(err)
	}
	a, err := svc.Agents.CreateAgent(ctx, in)
	if err != nil {
		b.Fatal(err)
	}
	return a.ID
}
