package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestCampaignUnreadableFileToldWithSettings: a file that cannot be read as rows (a line
// of the wrong width, a quote never closed, no phone_number column) is told together
// with the settings' own faults (conventions §2: every failing field at once), not
// before them; a settings fault decoding already named is told once; nothing is stored.
func TestCampaignUnreadableFileToldWithSettings(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	noConcurrency := strings.Replace(e.settingsJSON(), `,"max_concurrent":2`, ``, 1)
	badWindow := strings.Replace(e.settingsJSON(), `"end":"18:00"`, `"end":"08:00"`, 1)
	wrongType := strings.Replace(e.settingsJSON(), `"max_concurrent":2`, `"max_concurrent":"two"`, 1)
	wide := "phone_number,customer_name\n+14155550101,Ada\n+14155550103,Cy,extra\n"
	for _, c := range []struct {
		name, settings, csv string
		fields              []string
	}{
		{"a wide line, max_concurrent missing", noConcurrency, wide, []string{"max_concurrent", "recipients.line_3"}},
		{"a wide line, an empty window", badWindow, wide, []string{"window.end", "recipients.line_3"}},
		{"a quote never closed, max_concurrent missing", noConcurrency,
			"phone_number\n\"+14155550101\n", []string{"max_concurrent", "recipients.line_2"}},
		{"no phone_number column, max_concurrent missing", noConcurrency, "number\n+14155550101\n", []string{"max_concurrent", "file"}},
		{"a wide line, max_concurrent of the wrong type: told once", wrongType, wide, []string{"max_concurrent", "recipients.line_3"}},
		{"a wide line, good settings", e.settingsJSON(), wide, []string{"recipients.line_3"}},
	} {
		r := e.uploadCampaign(c.settings, c.csv)
		if t.Run(c.name, func(t *testing.T) { testkit.ExpectFields(t, r, c.fields...) }) && len(c.fields) > 1 {
			if msgs := r.FieldErrors()["max_concurrent"]; msgs != nil && len(msgs.([]any)) != 1 {
				t.Errorf("%s: max_concurrent told %d times: %v", c.name, len(msgs.([]any)), msgs)
			}
		}
	}
	// A line's width in words: in the singular for one field ("has 1 fields" before).
	for csv, want := range map[string]string{
		"phone_number,customer_name\n+14155550101\n":       "Line 2 has 1 field; the header has 2.",
		"phone_number,customer_name\n+14155550101,Ada,x\n": "Line 2 has 3 fields; the header has 2.",
	} {
		r := e.uploadCampaign(e.settingsJSON(), csv)
		testkit.ExpectFields(t, r, "recipients.line_2")
		if msgs, _ := r.FieldErrors()["recipients.line_2"].([]any); len(msgs) != 1 || msgs[0] != want {
			t.Errorf("line of the wrong width: %v, want %q", msgs, want)
		}
	}
	if list := e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil); len(list.List()) != 0 {
		t.Fatalf("a refused campaign was stored: %s", list.Body)
	}
}

// TestCampaignMissingVariableMessage: a variable the live version uses that some rows do
// not give is named with how many rows lack it (in the singular for one), their lines,
// and what to do.
func TestCampaignMissingVariableMessage(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token, map[string]any{
		"prompt_config": map[string]any{"default_variables": map[string]any{"customer_name": "there"}}}), 200)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+e.agent+"/publish", e.Owner.Token, nil), 204)
	for _, c := range []struct {
		csv, want string
	}{
		{"phone_number,plan\n+14155550101,\n+14155550102,gold\n", "nor 1 recipient gives: line 2. Give it a value in each recipient (a column plan in a CSV), or a default."},
		{"phone_number,plan\n+14155550101,\n+14155550102,\n", "nor 2 recipients give: line 2, line 3."},
	} {
		r := e.uploadCampaign(e.settingsJSON(), c.csv)
		testkit.ExpectFields(t, r, "recipients.variables.plan")
		if msg := r.FieldErrors()["recipients.variables.plan"].([]any)[0].(string); !strings.Contains(msg, c.want) {
			t.Errorf("message %q, want it to hold %q", msg, c.want)
		}
	}
}
