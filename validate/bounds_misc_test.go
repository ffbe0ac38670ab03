package validate

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// The bounds whose existing tests held one side only, or held it in ASCII alone.

func TestPriceBounds(t *testing.T) {
	table := func(price data.Money) error {
		return PriceTable(data.PriceTableSet{Currency: "USD",
			Prices: []data.PriceSet{{Provider: "openai", Model: "*", Unit: data.PriceUnits[0], Price: &price}}})
	}
	checkBounds(t, []bound{
		// A price is held in micro-units: one past the bound is a micro-unit more.
		{"MaxPrice", "prices.0.price", func(past bool) error {
			return table(data.Money(upTo(MaxPrice*data.MicrosPerUnit, past)))
		}},
		{"MinPrice", "prices.0.price", func(past bool) error { return table(data.Money(downTo(0, past))) }},
	})
}

func TestSourceAndSuppressionCountBounds(t *testing.T) {
	urls := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("https://example.com/%d", i)
		}
		return out
	}
	suppressions := func(n int) []data.SuppressionCreate {
		out := make([]data.SuppressionCreate, n)
		for i := range out {
			out[i] = data.SuppressionCreate{PhoneNumber: "+14155550101", Line: i + 2}
		}
		return out
	}
	checkBounds(t, []bound{
		{"MaxSourcesPerRequest", "files", func(past bool) error {
			return SourcesAdd(data.SourcesAdd{URLs: urls(upTo(MaxSourcesPerRequest, past))}, nil)
		}},
		{"MaxSourcesPerRequest create", "texts", func(past bool) error {
			return KnowledgeBaseCreate(data.KnowledgeBaseCreate{Name: "FAQ", URLs: urls(upTo(MaxSourcesPerRequest, past))}, nil)
		}},
		{"MaxURL source", "urls.0", func(past bool) error {
			const base = "https://example.com/"
			return SourcesAdd(data.SourcesAdd{URLs: []string{base + chars(upTo(MaxURL, past)-len(base))}}, nil)
		}},
		{"MaxSuppressionImport", "rows", func(past bool) error {
			_, err := Suppressions(suppressions(upTo(MaxSuppressionImport, past)), "", false)
			return err
		}},
	})
}

func TestAgentTestTextBounds(t *testing.T) {
	checkBounds(t, []bound{
		{"MaxTestName", "name", func(past bool) error {
			x := validTest()
			x.Name = chars(upTo(MaxTestName, past))
			return AgentTest(x, testTools)
		}},
		{"MaxTestPersona", "user.persona", func(past bool) error {
			x := validTest()
			x.User = data.TestUser{Persona: chars(upTo(MaxTestPersona, past)), Goal: "a table"}
			return AgentTest(x, testTools)
		}},
		{"MaxTestPersona goal", "user.goal", func(past bool) error {
			x := validTest()
			x.User = data.TestUser{Persona: "a regular", Goal: chars(upTo(MaxTestPersona, past))}
			return AgentTest(x, testTools)
		}},
		{"MaxTestPattern", "criteria.0.pattern", func(past bool) error {
			x := validTest()
			x.Criteria = []data.Criterion{{Type: data.CriterionSays, Pattern: chars(upTo(MaxTestPattern, past))}}
			return AgentTest(x, testTools)
		}},
		{"MaxTestJudgeCriterion", "criteria.0.criterion", func(past bool) error {
			x := validTest()
			x.Criteria = []data.Criterion{{Type: data.CriterionJudge, Criterion: chars(upTo(MaxTestJudgeCriterion, past))}}
			return AgentTest(x, testTools)
		}},
		{"MaxVariableValue test", "criteria.0.value", func(past bool) error {
			x := validTest()
			x.Criteria = []data.Criterion{{Type: data.CriterionVariableEquals, Name: "customer", Value: chars(upTo(MaxVariableValue, past))}}
			return AgentTest(x, testTools)
		}},
	})
}

// TestTwoByteTextBounds holds the bounds whose tests were in ASCII alone in two-byte
// characters: a character bound takes as many of them; MaxMockBody, a bound in bytes,
// half as many.
func TestTwoByteTextBounds(t *testing.T) {
	checkBounds(t, []bound{
		{"MaxPlanLen", "plan", func(past bool) error {
			return SubscriptionSet(data.SubscriptionSet{Plan: ptr(chars(upTo(MaxPlanLen, past)))})
		}},
		{"MaxSuppressionReason", "reason", func(past bool) error {
			_, err := Suppressions([]data.SuppressionCreate{{PhoneNumber: "+14155550101", Reason: ptr(chars(upTo(MaxSuppressionReason, past)))}}, "", true)
			return err
		}},
		{"MaxSuccessCriterion", "analysis_config.success_criterion", func(past bool) error {
			return agentErr(stored, `{"analysis_config":{"success_criterion":`+jsonString(chars(upTo(MaxSuccessCriterion, past)))+`}}`)
		}},
		{"MaxSearchQueryLen", "q", func(past bool) error {
			_, err := CallSearchParams(url.Values{"q": {chars(upTo(MaxSearchQueryLen, past))}})
			return err
		}},
		{"MaxSearchTerms", "q", func(past bool) error {
			words := make([]string, upTo(MaxSearchTerms, past))
			for i := range words {
				words[i] = "mot" + strings.Repeat("é", i+1)
			}
			_, err := CallSearchParams(url.Values{"q": {strings.Join(words, " ")}})
			return err
		}},
		{"MaxSecret", "llm_config.api_key", func(past bool) error {
			return agentErr(stored, `{"llm_config":{"api_key":`+jsonString(chars(upTo(MaxSecret, past)))+`}}`)
		}},
		{"MaxMockBody", "mocks.book.body", func(past bool) error {
			x := validTest()
			body := chars(MaxMockBody / 2)
			if past {
				body += "a"
			}
			x.Mocks = map[string]data.ToolMock{"book": {Status: 200, Body: body}}
			return AgentTest(x, testTools)
		}},
	})
}
