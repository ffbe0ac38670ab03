package server_test

import (
	"os"
	"strings"
	"testing"
)

// TestDocsVariableNumbersAsWritten: runtime.md and conversations.md say how a number
// variable fills {{name}} with the example values docs/api.md's rule gives ("kept as
// written"), and a call start fills them so: 2.50 stays 2.50, 12345678901234567890 is not
// rounded. (The pages once said "shortest form: 3, 2.5", which substitution never did.)
func TestDocsVariableNumbersAsWritten(t *testing.T) {
	e := newStartEnv(t)
	body := `{"direction": "inbound", "to_number": "` + startNumber + `", "from_number": "+15550000001",
		"variables": {"customer_name": 2.50, "plan": 12345678901234567890}}`
	r := e.Do("POST", "/api/v1/calls/start", e.runtime, body)
	if r.Status != 201 || !strings.Contains(string(r.Body), `"prompt":"You help 2.50 on the 12345678901234567890 plan.`) {
		t.Errorf("the start's prompt does not hold the numbers as written: %d %.400s", r.Status, r.Body)
	}
	for page, stated := range map[string]string{
		"runtime.md":       "a number as the JSON wrote it (`3`, `2.50`,\n`12345678901234567890`",
		"conversations.md": "numbers (written as the JSON wrote them:\n  `3`, `2.50`, `12345678901234567890`",
	} {
		doc, err := os.ReadFile("../docs/" + page)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), stated) || strings.Contains(string(doc), "shortest decimal form (a number") ||
			strings.Contains(string(doc), "written in their shortest form") {
			t.Errorf("docs/%s does not say numbers fill variables as written", page)
		}
	}
}
