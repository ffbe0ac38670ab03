package validate

import (
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// customFunctions is n custom_function tools, named f0, f1 and so on.
func customFunctions(n int) []*data.Tool {
	tools := make([]*data.Tool, n)
	for i := range tools {
		tools[i] = &data.Tool{Name: fmt.Sprint("f", i), Type: data.ToolCustomFunction, APIEndpoint: "https://example.com/f"}
	}
	return tools
}

func TestAgentTestCountBounds(t *testing.T) {
	says := data.Criterion{Type: data.CriterionSays, Pattern: "table"}
	tools := customFunctions(MaxTestMocks + 1)
	checkBounds(t, []bound{
		{"MaxTestMocks", "mocks", func(past bool) error {
			x := validTest()
			x.Mocks = map[string]data.ToolMock{}
			for _, tool := range tools[:upTo(MaxTestMocks, past)] {
				x.Mocks[tool.Name] = data.ToolMock{Status: 200}
			}
			x.Criteria = []data.Criterion{says}
			return AgentTest(x, tools)
		}},
		{"MinTestCriteria", "criteria", func(past bool) error {
			x := validTest()
			x.Criteria = repeatCriterion(downTo(MinTestCriteria, past))
			return AgentTest(x, testTools)
		}},
		{"MaxTestCriteria", "criteria", func(past bool) error {
			x := validTest()
			x.Criteria = repeatCriterion(upTo(MaxTestCriteria, past))
			return AgentTest(x, testTools)
		}},
		{"MaxTestRunTests", "test_ids", func(past bool) error {
			ids := make([]string, upTo(MaxTestRunTests, past))
			for i := range ids {
				ids[i] = fmt.Sprintf("%s01JD6%021d", data.PrefixAgentTest, i)
			}
			return TestRunCreate(data.TestRunCreate{TestIDs: data.Some(ids)})
		}},
	})
}
