package conversation

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// MaxModelCallsPerTurn bounds the model → tools → model loop of one user turn; the last
// call offers no tools, so a turn always ends with text.
const MaxModelCallsPerTurn = 6

// Retriever finds the chunks of the agent's knowledge bases that match a user's message,
// best first, with the agent's knowledge_base_config.
type Retriever interface {
	Retrieve(ctx context.Context, query string) ([]data.KnowledgeRef, error)
}

// Doer makes a custom function's HTTP request (an SSRF-guarded *http.Client in the server).
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Engine runs one agent configuration. Config holds the configuration as stored, with
// its {{variables}}: they are substituted on each turn with the conversation's values
// then (an extracted variable is used from the next model call on).
type Engine struct {
	Config data.AgentConfig
	Model  llm.Client
	// Retriever is nil when the agent has no knowledge bases.
	Retriever Retriever
	// Functions makes custom_function requests; nil refuses them (the model is told).
	Functions Doer
	// Mocks, when not nil, answer custom functions by tool name instead of Functions (an
	// agent test's mocks): no request is made, and a function without a mock is refused.
	Mocks map[string]FunctionAnswer
	// Facts are the built-in variables' values (Now is replaced by the clock each turn).
	Facts CallFacts
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Renew, when set, is called before each step of a reply after its first model call
	// (each tool call, each model call after a tool round); its error ends the reply. The
	// service extends the conversation's lease there, so that the lease spans one step.
	Renew func(ctx context.Context) error
}

// renew calls Renew when set.
func (e *Engine) renew(ctx context.Context) error {
	if e.Renew == nil {
		return nil
	}
	return e.Renew(ctx)
}

// State is a conversation as the engine needs it: its variables (given and extracted,
// without the built-ins) and its messages so far.
type State struct {
	Variables map[string]any
	Items     []data.ConversationItem
}

// Outcome is what a turn added: items, variables set by tools, usage, and the reason the
// conversation ends ("" when it goes on).
type Outcome struct {
	Items     []data.ConversationItem
	Variables map[string]any
	Usage     data.TokenUsage
	End       string
	// Transfer is the phone directory entry a transfer_call chose.
	Transfer *data.PhoneDirectoryEntry
}

// dynamicOpening asks the model for its first words when the welcome message is dynamic.
const dynamicOpening = "You speak first. Open the conversation with a short greeting, as the instructions above describe."

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// values returns st's variables with the built-ins.
func (e *Engine) values(st State) map[string]any {
	f := e.Facts
	f.Now = e.now()
	return WithBuiltIns(st.Variables, f)
}

// Open returns the agent's opening: nothing when the user speaks first, the static
// welcome message verbatim (substituted), or a dynamic one the model writes from the
// prompt (with no tools).
func (e *Engine) Open(ctx context.Context, st State, obs data.ConversationObserver) (*Outcome, error) {
	out := &Outcome{Variables: map[string]any{}}
	p := e.Config.PromptConfig
	if p.FirstSpeaker != "ai" {
		return out, nil
	}
	cfg, _ := SubstituteConfig(e.Config, e.values(st))
	if p.WelcomeMessageType != "dynamic" {
		item := data.ConversationItem{Role: data.ItemAgent, Content: cfg.PromptConfig.WelcomeMessage, CreatedAt: data.NewTime(e.now())}
		if obs.Text != nil && item.Content != "" {
			if err := obs.Text(item.Content); err != nil {
				return nil, err
			}
		}
		return out, out.add(obs, item)
	}
	req := e.request(&cfg, nil, nil)
	req.System += "\n\n" + dynamicOpening
	req.Tools = nil
	reply, err := e.Model.Complete(ctx, req, obs.Text)
	if err != nil {
		return nil, err
	}
	out.Usage = out.Usage.Add(usageOf(reply))
	return out, out.add(obs, e.agentItem(reply, nil))
}

// Reply answers a user message: retrieval for it, then model calls and their tool calls
// until the model answers with text, a tool ends the conversation, or
// MaxModelCallsPerTurn is reached. The user's item is the first of Outcome.Items.
func (e *Engine) Reply(ctx context.Context, st State, text string, obs data.ConversationObserver) (*Outcome, error) {
	out := &Outcome{Variables: map[string]any{}}
	if err := out.add(obs, data.ConversationItem{Role: data.ItemUser, Content: text, CreatedAt: data.NewTime(e.now())}); err != nil {
		return nil, err
	}
	var knowledge []data.KnowledgeRef
	if e.Retriever != nil {
		var err error
		if knowledge, err = e.Retriever.Retrieve(ctx, text); err != nil {
			return nil, err
		}
		if knowledge == nil {
			knowledge = []data.KnowledgeRef{}
		}
	}
	vars := Merge(st.Variables)
	keys := e.functionKeys(st, text)
	for call := 0; call < MaxModelCallsPerTurn && out.End == ""; call++ {
		if call > 0 {
			if err := e.renew(ctx); err != nil {
				return nil, err
			}
		}
		cfg, _ := SubstituteConfig(e.Config, e.values(State{Variables: vars}))
		history := append(append([]data.ConversationItem{}, st.Items...), out.Items...)
		req := e.request(&cfg, history, knowledge)
		if call == MaxModelCallsPerTurn-1 {
			req.ToolChoice = llm.ToolChoice{Mode: "none"}
		}
		reply, err := e.Model.Complete(ctx, req, obs.Text)
		if err != nil {
			return nil, err
		}
		out.Usage = out.Usage.Add(usageOf(reply))
		item := e.agentItem(reply, nil)
		if call == 0 {
			item.Knowledge = knowledge
		}
		if err := out.add(obs, item); err != nil {
			return nil, err
		}
		if len(reply.ToolCalls) == 0 || req.ToolChoice.Mode == "none" {
			break
		}
		for _, tc := range reply.ToolCalls {
			if err := e.renew(ctx); err != nil {
				return nil, err
			}
			r := e.runTool(ctx, &cfg, tc, keys)
			for k, v := range r.set {
				vars[k], out.Variables[k] = v, v
			}
			if out.End == "" && r.end != "" {
				out.End, out.Transfer = r.end, r.transfer
			}
			tool := data.ConversationItem{Role: data.ItemTool, Content: toolContent(tc.Name, r), ToolCall: r.item(tc), CreatedAt: data.NewTime(e.now())}
			if err := out.add(obs, tool); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// add appends an item and tells the observer.
func (o *Outcome) add(obs data.ConversationObserver, item data.ConversationItem) error {
	o.Items = append(o.Items, item)
	if obs.Item != nil {
		return obs.Item(&o.Items[len(o.Items)-1])
	}
	return nil
}

func usageOf(r *llm.Reply) data.TokenUsage {
	return data.TokenUsage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
}

// agentItem records one model reply: its text, latencies and usage.
func (e *Engine) agentItem(r *llm.Reply, knowledge []data.KnowledgeRef) data.ConversationItem {
	u := usageOf(r)
	return data.ConversationItem{
		Role: data.ItemAgent, Content: r.Text, Knowledge: knowledge,
		LatencyMS: &data.TurnLatency{FirstToken: r.FirstToken.Milliseconds(), Total: r.Total.Milliseconds()},
		Usage:     &u, CreatedAt: data.NewTime(e.now()),
	}
}

// request assembles one model call: the substituted prompt with the turn's retrieved
// chunks, the history, the tools, and the model settings.
func (e *Engine) request(cfg *data.AgentConfig, history []data.ConversationItem, knowledge []data.KnowledgeRef) llm.Request {
	return llm.Request{
		System:      SystemPrompt(cfg.PromptConfig.Prompt, knowledge),
		Messages:    Messages(history),
		Tools:       Tools(cfg),
		Temperature: cfg.LLMConfig.Temperature,
		MaxTokens:   deref(cfg.LLMConfig.MaxTokens),
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// SystemPrompt is the agent's prompt followed by the chunks retrieved for this turn.
func SystemPrompt(prompt string, knowledge []data.KnowledgeRef) string {
	if len(knowledge) == 0 {
		return prompt
	}
	var b strings.Builder
	b.Grow(len(prompt) + 200*len(knowledge))
	b.WriteString(prompt)
	b.WriteString("\n\nKnowledge that may help answer the user's last message (use it only if it is relevant):")
	for i, k := range knowledge {
		b.WriteString("\n[")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString("] ")
		b.WriteString(k.Text)
	}
	return b.String()
}

// Messages rebuilds the model's view of a conversation from its items: an agent item is an
// assistant message whose tool calls are the tool items right after it, each of which is
// then a tool message carrying its result.
func Messages(items []data.ConversationItem) []llm.Message {
	out := make([]llm.Message, 0, len(items))
	for i := 0; i < len(items); i++ {
		it := items[i]
		switch it.Role {
		case data.ItemUser:
			out = append(out, llm.Message{Role: llm.RoleUser, Content: it.Content})
		case data.ItemAgent:
			m := llm.Message{Role: llm.RoleAssistant, Content: it.Content}
			j := i + 1
			for ; j < len(items) && items[j].Role == data.ItemTool && items[j].ToolCall != nil; j++ {
				tc := items[j].ToolCall
				m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: argumentsText(tc.Arguments)})
			}
			out = append(out, m)
			for _, t := range items[i+1 : j] {
				out = append(out, llm.Message{Role: llm.RoleTool, Content: resultText(t.ToolCall.Result), ToolCallID: t.ToolCall.ID, ToolName: t.ToolCall.Name, ToolError: t.ToolCall.Error})
			}
			i = j - 1
		}
	}
	return out
}

// argumentsText writes arguments back as the JSON the model sent (a raw text as it was).
func argumentsText(a any) string {
	if s, ok := a.(string); ok {
		return s
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func resultText(r any) string {
	b, err := json.Marshal(r)
	if err != nil {
		return `{"error":"the result cannot be shown"}`
	}
	return string(b)
}
