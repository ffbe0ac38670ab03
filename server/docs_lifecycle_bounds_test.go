package server_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// TestDocsLifecycleBounds: each bound the life-cycle pages state (conventions §21 to
// §26) is written from the constant validate (or data) enforces, so that a bound changed
// in one place and not the other fails here. The OpenAPI document reads the same
// constants (TestOpenAPILifecycleBodiesAreEnforced probes them against the rules).
func TestDocsLifecycleBounds(t *testing.T) {
	n := grouped
	stated := map[string][]string{
		"testing-agents.md": {
			fmt.Sprintf("`name` | required, 1–%d characters", validate.MaxTestName),
			fmt.Sprintf("each turn non-blank, at most %s characters", n(validate.MaxTestTurn)),
			fmt.Sprintf("`user.persona`, `user.goal` | both, non-blank, at most %s characters each", n(validate.MaxTestPersona)),
			fmt.Sprintf("`variables` | at most %d, names", validate.MaxConversationVariables),
			fmt.Sprintf("values string (≤ %s), number or boolean; %d KiB encoded", n(validate.MaxVariableValue), validate.MaxObjectBytes>>10),
			fmt.Sprintf("`max_turns` | %d–%d, default %d", validate.MinTestMaxTurns, validate.MaxTestMaxTurns, data.DefaultTestMaxTurns),
			fmt.Sprintf("`mocks` | at most %d,", validate.MaxTestMocks),
			fmt.Sprintf("`status` %d–%d", validate.MinMockStatus, validate.MaxMockStatus),
			fmt.Sprintf("at most %d KiB", validate.MaxMockBody>>10),
			fmt.Sprintf("`criteria` | %d–%d", validate.MinTestCriteria, validate.MaxTestCriteria),
			fmt.Sprintf("`repeat` | %d–%d, default %d", validate.MinTestRepeat, validate.MaxTestRepeat, data.DefaultTestRepeat),
			fmt.Sprintf("(`name` %d, `pattern` %d, `criterion` %d characters)", validate.MaxIdentifier, validate.MaxTestPattern, validate.MaxTestJudgeCriterion),
			fmt.Sprintf("An agent has at most %d tests", validate.MaxTestsPerAgent),
			fmt.Sprintf("`value`: %d–%s", validate.MinTestLatencyMS, n(validate.MaxTestLatencyMS)),
			fmt.Sprintf("(1 to %d ids, each once)", validate.MaxTestRunTests),
		},
		"conversations.md": {
			fmt.Sprintf("required, not blank, at most %s characters", n(validate.MaxConversationMessage)),
			fmt.Sprintf("Values are strings (at most %s characters)", n(validate.MaxVariableValue)),
			fmt.Sprintf("at most %d of them, %d KiB encoded", validate.MaxConversationVariables, validate.MaxObjectBytes>>10),
			fmt.Sprintf("| open conversations of a workspace | %d (`--max-open-conversations`), or the plan's `%s` |", data.DefaultMaxOpenConversations, data.LimitOpenConversations),
			fmt.Sprintf("Either is at most %s.", n(validate.MaxOpenConversations)),
			fmt.Sprintf("A workspace holds at most %d open conversations at once", data.DefaultMaxOpenConversations),
			fmt.Sprintf("\"The workspace has %d open conversations, the most it may have", data.DefaultMaxOpenConversations),
			fmt.Sprintf("| the agent's turns | %d |", data.ConversationMaxAgentTurns),
			fmt.Sprintf("| idle time | %d minutes", int(data.ConversationIdleTimeout.Minutes())),
		},
		"configuration.md": {
			fmt.Sprintf("| `--max-open-conversations N` | `VOICEAPI_MAX_OPEN_CONVERSATIONS` | `%d` |", data.DefaultMaxOpenConversations),
			fmt.Sprintf("`0` turns it off (plans' limits still hold); at most %s.", n(validate.MaxOpenConversations)),
		},
		"subscription.md": {
			fmt.Sprintf("`--open-conversations` (conversations open at once, 0 to %s)", n(validate.MaxOpenConversations)),
			fmt.Sprintf("Either bound is at most %s:", n(validate.MaxOpenConversations)),
			fmt.Sprintf("else the server's `--max-open-conversations` (%d by default;", data.DefaultMaxOpenConversations),
		},
		"runtime.md": {
			fmt.Sprintf("(at most %d characters), values are strings (at most %s characters), numbers or booleans; at most %d, %d KiB encoded",
				validate.MaxIdentifier, n(validate.MaxVariableValue), validate.MaxConversationVariables, validate.MaxObjectBytes>>10),
			fmt.Sprintf("(at most %d KiB, nested at most %d levels)", validate.MaxObjectBytes>>10, validate.MaxObjectDepth),
		},
		"agents.md": {
			fmt.Sprintf("| `variants` | required, 1 to %d items", validate.MaxRolloutVariants),
			fmt.Sprintf("`min_calls` 1 to %s", n(validate.MaxRolloutMinCalls)),
		},
		"analysis.md": {
			fmt.Sprintf("`fields`: at most %d;", validate.MaxAnalysisFields),
			fmt.Sprintf("most %d characters), is unique", validate.MaxAnalysisFieldName),
			fmt.Sprintf("`description` is required, at most %s characters", n(validate.MaxAnalysisFieldDescription)),
			fmt.Sprintf("`choices` (at most %d, each once, each not blank and at most %d characters)", validate.MaxAnalysisChoices, validate.MaxIdentifier),
			fmt.Sprintf("`success_criterion` (at most %s characters)", n(validate.MaxSuccessCriterion)),
			fmt.Sprintf("`summary` not a string (at most %s characters", n(validate.MaxAnalysisText)),
			fmt.Sprintf("Each list at most %d lines", validate.MaxUsageLines),
			fmt.Sprintf("tokens 0 to %s, characters 0 to %s, seconds 0 to %s", n(validate.MaxUsageTokens), n(validate.MaxUsageCharacters), n(validate.MaxUsageSeconds)),
			fmt.Sprintf("at most %d rows", validate.MaxPrices),
			fmt.Sprintf("from 0 to %s", n(validate.MaxPrice)),
		},
		"campaigns.md": {
			fmt.Sprintf("`name` not blank, at most %d characters", validate.MaxCampaignName),
			fmt.Sprintf("A workspace has at most %d open campaigns (scheduled, running or paused) at once", validate.MaxOpenCampaigns),
			fmt.Sprintf("(\"The workspace has %d open campaigns (scheduled, running or paused), the most it may have", validate.MaxOpenCampaigns),
			fmt.Sprintf("at most %s recipients, %d variables a recipient", n(validate.MaxCampaignRecipients), validate.MaxRecipientVariables),
			fmt.Sprintf("`max_concurrent` 1 to %s", n(validate.MaxCampaignConcurrent)),
			fmt.Sprintf("`max_attempts` 1 to %d", validate.MaxCampaignAttempts),
			fmt.Sprintf("`backoff_minutes` 1 to %s (a week)", n(validate.MaxBackoffMinutes)),
			fmt.Sprintf("(`max` required, 1 to %d; `lease_seconds` %d to %s, default %d)",
				validate.MaxDialClaim, validate.MinDialLeaseSeconds, n(validate.MaxDialLeaseSeconds), int(data.DefaultDialLease.Seconds())),
			fmt.Sprintf("at most %d tasks a claim", validate.MaxDialClaim),
			fmt.Sprintf("(`reason` at most %d characters;", validate.MaxSuppressionReason),
			fmt.Sprintf("A workspace's list holds at most %s numbers", n(validate.MaxSuppressions)),
			fmt.Sprintf("one import at most %s rows", n(validate.MaxSuppressionImport)),
		},
		"jobs.md": {
			fmt.Sprintf("at most %d characters; another kind is 422", validate.MaxJobKindLength),
		},
	}
	for file, phrases := range stated {
		raw, err := os.ReadFile("../docs/" + file)
		if err != nil {
			t.Fatal(err)
		}
		// Line breaks and their indent are a single space to a reader.
		text := strings.Join(strings.Fields(string(raw)), " ")
		for _, p := range phrases {
			if !strings.Contains(text, p) {
				t.Errorf("docs/%s does not state %q", file, p)
			}
		}
	}
}

// grouped writes n as the docs' prose does, thousands grouped with commas (10,000).
func grouped(n int) string {
	s := strconv.Itoa(n)
	if n < 1000 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
