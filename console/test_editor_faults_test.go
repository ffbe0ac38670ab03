package console_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestTestEditorShowsEveryFaultAtOnce: one submission of the test editor shows every
// fault of the form beside its field: those only the editor can read (a variables line
// without "=", arguments that are not JSON), whose text it sends as typed and names in
// its own words, and the API's (a missing name, a max turns and a mock status that are no
// numbers, a pattern that is no regular expression), in one 422. Before, the editor
// refused its own faults without asking the API, and the others showed only once those
// were fixed. Nothing is stored, for a new test or an edit.
func TestTestEditorShowsEveryFaultAtOnce(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Trattoria")
	s := e.SignIn(e.Owner, "")
	form := url.Values{"name": {""}, "caller": {"script"}, "script": {"A table for two"}, "max_turns": {"ten"}, "repeat": {"1"},
		"variables": {"city=Rome\nno equals sign"}, "mock_tool": {"book"}, "mock_status": {"ok"}, "mock_body": {"{}"},
		"c_type": {"tool_called", "says"}, "c_name": {"book", ""}, "c_arguments": {"{people: 2", ""}, "c_pattern": {"", "(booked"},
		"c_value": {"", ""}, "c_reason": {"", ""}, "c_criterion": {"", ""}}
	// Each fault under its field: the field's input (the nth of its name) and the message
	// shown between it and the end of its field; a mock's faults head the mocks.
	want := []struct {
		input string
		nth   int
		msg   string
	}{
		{"name", 0, "Name is required."},
		{"max_turns", 0, "Max turns must be an integer."},
		{"variables", 0, "Each line of variables is NAME=VALUE."},
		{"c_arguments", 0, `The arguments must be a JSON object, such as {"people": 2}.`},
		{"c_pattern", 1, "Criterion 2 pattern is not a valid regular expression: a ( has no closing )."},
		{"<legend>Mocks", 0, "Mock book status must be an integer."},
	}
	check := func(what string, res *testenv.Response) {
		t.Helper()
		page := html.UnescapeString(string(res.Body))
		if res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d, want 422:\n%s", what, res.Status, page)
		}
		for _, w := range want {
			at, rest := w.input, page
			if !strings.HasPrefix(at, "<") {
				at = `name="` + at + `"`
			}
			for range w.nth {
				if i := strings.Index(rest, at); i >= 0 {
					rest = rest[i+len(at):]
				}
			}
			i := strings.Index(rest, at)
			if i < 0 {
				t.Errorf("%s: no field %s", what, at)
				continue
			}
			field := rest[i:]
			if end := strings.Index(field, "</div>"); end >= 0 && !strings.HasPrefix(at, "<") {
				field = field[:end]
			} else if end := strings.Index(field, "</fieldset>"); end >= 0 {
				field = field[:end]
			}
			if !strings.Contains(field, `<p class="err">`+w.msg+`</p>`) {
				t.Errorf("%s: %s shows no %q beside it:\n%s", what, w.input, w.msg, field)
			}
		}
		if tests := e.Do(nil, "GET", "/api/v1/agents/"+id+"/tests", e.Owner.Token, nil); len(tests.JSON()["data"].([]any)) != 1 {
			t.Errorf("%s: %d tests stored, want the one made before", what, len(tests.JSON()["data"].([]any)))
		}
	}
	made := e.Do(nil, "POST", "/api/v1/agents/"+id+"/tests", e.Owner.Token, map[string]any{"name": "kept",
		"user": map[string]any{"script": []string{"Hi"}}, "criteria": []any{map[string]any{"type": "says", "pattern": "hello"}}})
	if made.Status != http.StatusCreated {
		t.Fatalf("a test to edit: %d %s", made.Status, made.Body)
	}
	csrf := e.CSRF(s)
	form.Set("csrf_token", csrf)
	check("a new test", e.Do(s.Client, "POST", "/agents/"+id+"/tests", "", form))
	form.Set("etag", made.Header.Get("ETag"))
	check("an edit", e.Do(s.Client, "POST", "/agents/"+id+"/tests/"+made.Data()["id"].(string), "", form))
}
