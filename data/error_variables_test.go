package data

import (
	"strings"
	"testing"
)

// TestMissingVariablesSaysWhatToDo: the 422 names each variable and tells where a value
// goes, in the message and in each field's entry.
func TestMissingVariablesSaysWhatToDo(t *testing.T) {
	e := MissingVariables([]string{"hotel", "nights"})
	if !strings.Contains(e.Message, "hotel, nights.") || !strings.Contains(e.Message, "Give each a value in variables, or a default in the agent's prompt_config.default_variables.") {
		t.Errorf("message: %q", e.Message)
	}
	for _, p := range []string{"variables.hotel", "variables.nights"} {
		if len(e.Fields[p]) != 1 || !strings.Contains(e.Fields[p][0], "give it one in variables, or a default") {
			t.Errorf("%s: %v", p, e.Fields[p])
		}
	}
}
