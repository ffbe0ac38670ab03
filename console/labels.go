package console

import (
	"regexp"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// labelOverrides are the API values whose label is not their words capitalized: brand
// names, and names that read better otherwise. Everything else goes through humanize.
var labelOverrides = map[string]string{
	// Providers.
	"elevenlabs": "ElevenLabs", "assemblyai": "AssemblyAI", "bedrock_claude": "Bedrock (Claude)",
	"azure": "Azure OpenAI", "internal": "Self-hosted (OpenAI-compatible)", "openai": "OpenAI",
	"sip": "SIP", "groq": "Groq", "mistral": "Mistral", "deepgram": "Deepgram",
	"cartesia": "Cartesia", "rime": "Rime", "twilio": "Twilio", "telnyx": "Telnyx", "vonage": "Vonage",
	// Agent and prompt settings.
	"ai": "The agent", "user": "The caller",
	// Subscription limits.
	"workspace_users": "Members", "call_minutes_per_month": "Call minutes this month",
	"concurrent_calls": "Concurrent calls (open now)", "open_conversations": "Open conversations (now)",
	// Sources and scopes.
	"texts": "Text", "urls": "URL", "files": "File",
	"calls:runtime":   "Voice runtime (start and register calls, read agents and numbers)",
	"workspace:admin": "Workspace administration",
	// A test's criterion types, where the words of the code read wrong.
	"not_says": "Does not say", "max_latency_ms": "Latency at most (ms)", "judge": "Judged by a model",
	// How a call or test conversation ended (data.TestEndReasons among them).
	"user_ended": "Caller ended", "agent_ended": "Agent ended", "max_turns": "Turn limit reached",
	// Job kinds: the one table of their names, wherever the console shows a kind.
	"knowledge_base.fetch_url": "URL fetch", "knowledge_base.embed": "Embeddings", "analysis.call": "Call analysis",
	"analysis.backfill": "Analysis backfill", "agent.test_run": "Test run", "campaign.start": "Campaign start",
	"conversation.redact_ended": "Ended conversations redacted", "agent.seal_headers": "Credential headers sealed", "campaign.delete_recipients": "Deleted campaign's recipients",
	"idempotency.note_starts": "Kept conversation starts noted", "agent.cut_kept_answers": "Deleted agent's kept answers cut",
	"idempotency.delete_token_answers": "Deleted token's kept answers deleted",
	// Price units.
	"llm_input_1m_tokens": "Model input, per million tokens", "llm_output_1m_tokens": "Model output, per million tokens",
	"tts_1m_characters": "Speech synthesis, per million characters", "stt_minute": "Speech recognition, per minute",
	"telephony_minute": "Telephony, per minute",
	// Redaction detectors.
	"card": "Card numbers", "email": "Email addresses", "phone": "Phone numbers",
	"iban": "IBANs", "ssn": "US social security numbers",
}

// acronyms keep their capitals inside a humanized label.
var acronyms = map[string]string{
	"api": "API", "url": "URL", "urls": "URLs", "id": "ID", "ids": "IDs", "ivr": "IVR", "sms": "SMS",
	"llm": "LLM", "stt": "STT", "tts": "TTS", "http": "HTTP", "ai": "AI",
}

// label turns an API value (an enum, an event type, a limit's name) into words for
// people: "call_minutes_per_month" → "Call minutes this month", "agent.published" →
// "Agent published", "user_hangup" → "User hangup".
func label(v any) string {
	s := str(v)
	if l, ok := labelOverrides[s]; ok {
		return l
	}
	return humanize(s)
}

// humanize splits snake_case, dots and colons into capitalized words.
func humanize(s string) string {
	if s == "" {
		return ""
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '.' || r == ':' || r == '-' })
	for i, w := range words {
		if a, ok := acronyms[w]; ok {
			words[i] = a
		} else if i == 0 {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// scopeLabel names an API key scope: its module's words and the access ("Agents: read").
func scopeLabel(scope string) string {
	if l, ok := labelOverrides[scope]; ok {
		return l
	}
	module, access, ok := strings.Cut(scope, ":")
	if !ok {
		return humanize(scope)
	}
	return humanize(module) + ": " + access
}

// moduleByCode finds a module the API's messages name by its code ("the call_history
// module"); modulesInWords names it as every page does ("the Call history module").
var moduleByCode = regexp.MustCompile(`\b(` + strings.Join(data.Modules, "|") + `) module\b`)

// modulesInWords rewrites the module codes of an API message (a refusal shown on the
// error page or beside a form) in words, with label.
func modulesInWords(msg string) string {
	return moduleByCode.ReplaceAllStringFunc(msg, func(m string) string {
		return label(strings.TrimSuffix(m, " module")) + " module"
	})
}
