package openapi

import (
	"fmt"
	"net/http"
	"reflect"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// conversationVersionType is "live", "draft" or a number on the wire (its own JSON).
var conversationVersionType = reflect.TypeFor[data.ConversationVersion]()

// conversationVersionSchema is the schema of data.ConversationVersion.
func conversationVersionSchema() map[string]any {
	return map[string]any{
		"oneOf": []any{
			map[string]any{"type": "string", "enum": []any{data.ConversationLive, data.ConversationDraft}},
			map[string]any{"type": "integer", "minimum": 1},
		},
		"description": `"live" (the published version, the default), "draft" (the current configuration; needs the right to write agents) or a version number.`,
	}
}

// conversationStreamExample is a streamed reply: items, the text as it is written, done.
const conversationStreamExample = "event: item\n" +
	`data: {"role":"user","content":"How much is pro?","tool_call":null,"knowledge":null,"latency_ms":null,"usage":null,"created_at":"2026-11-21T10:04:05.123Z"}` + "\n\n" +
	"event: delta\ndata: {\"text\":\"Pro costs \"}\n\n" +
	"event: delta\ndata: {\"text\":\"20 euros.\"}\n\n" +
	"event: item\n" +
	`data: {"role":"agent","content":"Pro costs 20 euros.","tool_call":null,"knowledge":[{"knowledge_base_id":"kb_01JD6Q0000000000000000000A","source_id":"src_01JD6Q0000000000000000000B","text":"The pro plan costs 20 euros a month.","score":0.82}],"latency_ms":{"first_token":180,"total":420},"usage":{"input_tokens":310,"output_tokens":7},"created_at":"2026-11-21T10:04:05.603Z"}` + "\n\n" +
	"event: done\n" +
	`data: {"data":{"conversation_id":"conv_01JD6Q0000000000000000000C","items":[],"usage":{"input_tokens":310,"output_tokens":7},"status":"active","disconnection_reason":null,"call_id":null}}` + "\n\n"

func init() {
	const tag = "Conversation"
	provider := []int{http.StatusBadGateway, http.StatusGatewayTimeout, http.StatusServiceUnavailable}
	opDocs["POST /api/v1/agents/{agent_id}/conversations"] = opDoc{Tag: tag, Summary: "Start a conversation with an agent",
		Description: "Runs the agent's configuration as text through its own language model (conventions §21): the live version (409 not_published when the agent " +
			"has none), a version, or the draft. Variables fill the configuration's {{name}} references; one used and given nowhere is 422 " +
			"missing_variables naming variables.<name>. When the agent speaks first, its opening is in messages (a static welcome message " +
			"verbatim, a dynamic one written by the model). " + fmt.Sprintf("409 conflict when the workspace already holds the most open "+
			"conversations it may: its plan's %s limit, else the server's --max-open-conversations (%d by default); active ones, an idle one "+
			"expired after 30 minutes not counted; nothing is stored. ", data.LimitOpenConversations, data.DefaultMaxOpenConversations) + "A provider's failure is 502 provider_error, no answer in time 504 provider_timeout; " +
			"503 when the server has no language model client. See docs/conversations.md.",
		Body: data.ConversationStart{}, Out: data.Conversation{}, Status: http.StatusCreated,
		Errors: append([]int{http.StatusConflict}, provider...)}
	opDocs["GET /api/v1/conversations"] = opDoc{Tag: tag, Summary: "List conversations, without their messages", Out: data.ConversationSummary{}, Shape: shapeList,
		Query: []queryParam{
			{"agent_id", "Only this agent's conversations.", map[string]any{"type": "string"}},
			{"status", "Only conversations in this status.", map[string]any{"type": "string", "enum": validate.ConversationStatuses}},
		},
		Description: "The workspace's conversations with the agents the caller may see, drafts' included, newest first, each without its " +
			"messages (the show route has them). Ended ones are also web calls (GET /api/v1/calls?direction=web). See docs/conversations.md."}
	opDocs["GET /api/v1/conversations/{conversation_id}"] = opDoc{Tag: tag, Summary: "Show a conversation with its messages", Out: data.Conversation{}}
	opDocs["POST /api/v1/conversations/{conversation_id}/messages"] = opDoc{Tag: tag, Summary: "Send a message and get the agent's reply",
		Description: "200 with the turn: the items it added (the user's message, each model reply, each tool's result) and the conversation's status " +
			"after it (end_call, transfer_call or the 100th agent turn end it, and call_id names the call it became). With Accept: text/event-stream " +
			"the reply streams as Server-Sent Events: `item` frames (each item once complete), `delta` frames ({\"text\": …} as the model writes), " +
			"then `done` ({\"data\": turn}) or `error` (the error shape). A provider that fails before answering is a plain 502 or 504 either way. " +
			"409 when the conversation has ended (or expired: 30 minutes idle) or another of its messages is being answered. Nothing is stored when " +
			"the answer fails. See docs/conversations.md.",
		Body: data.ConversationMessage{}, BodyRequired: true, Out: data.ConversationTurn{}, AltMedia: []string{"text/event-stream"},
		Example: conversationStreamExample, Errors: append([]int{http.StatusConflict}, provider...)}
	opDocs["POST /api/v1/conversations/{conversation_id}/end"] = opDoc{Tag: tag, Summary: "End a conversation: the call it becomes",
		Description: "200 with the call record (direction web, the transcript with tool items, the variables, disconnection_reason user_ended, " +
			"or expired after 30 idle minutes); a conversation already ended returns its call as stored now to a caller who may read call history " +
			"(module call_history; on a key with scopes, call_history:read), 403 to any other. 409 while a message is being answered. " +
			"The call and the conversation are redacted; text past the redaction rules' work bound is kept as [withheld: too long to redact], never refused.",
		Out: data.Call{}, Errors: []int{http.StatusConflict}}

	fieldRules["ConversationStart"] = map[string]fieldRule{
		"variables": variablesRule,
	}
	fieldRules["ConversationMessage"] = map[string]fieldRule{
		"content": fieldRule{MinLength: 1, MaxLength: validate.MaxConversationMessage}.with(true, "The user's message."),
	}
	fieldRules["Conversation"] = map[string]fieldRule{
		"status":               oneOf(data.ConversationActive, data.ConversationEnded),
		"agent_version":        {Description: "null for a conversation with the draft."},
		"disconnection_reason": oneOf(data.EndUserEnded, data.EndAgentEnded, data.EndTransferred, data.EndMaxTurns, data.EndExpired),
		"call_id":              {Description: "The call the conversation became once ended."},
	}
	fieldRules["ConversationSummary"] = fieldRules["Conversation"]
	fieldRules["ConversationItem"] = map[string]fieldRule{
		"role":      oneOf(data.ItemAgent, data.ItemUser, data.ItemTool),
		"tool_call": {Description: "On tool items: the call the model made and its result."},
		"knowledge": {Nullable: true, Description: "On the first agent item of a turn whose agent has knowledge bases: the chunks retrieved for the user's message; null on every other item."},
	}
	typeDocs["Conversation"] = "A text conversation with an agent (conventions §21)."
	typeDocs["ConversationSummary"] = "A conversation as a list shows it: without its messages."
	typeDocs["ConversationItem"] = "One message: the user's, the agent's (one model reply; empty when it only called tools) or a tool's result."
	typeDocs["ConversationTurn"] = "What a message added, and the conversation's status after it."
}
