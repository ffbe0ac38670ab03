package cli

import (
	"github.com/voiceapi/voiceapi/service"
)

// AnalysisOptions are post-call analysis's model clients: the same as conversations' (each
// agent version's provider through the SSRF guard, with the operator's --llm-base-url,
// --llm-timeout and --allow-url-prefix), since both ask the agent's own model.
func AnalysisOptions(s LLMSettings) service.AnalysisOptions {
	return service.AnalysisOptions{Models: ConversationOptions(s).Models}
}
