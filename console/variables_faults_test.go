package console_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestVariableFaultBesideItsField: the API names a bad variable by its own path
// ("variables.my var"), which no field of the form has; a number's page and the test
// editor showed it only above the form, their Variables field not marked. It is beside
// that field now, and the field is marked invalid.
func TestVariableFaultBesideItsField(t *testing.T) {
	e := testenv.Start(t)
	agent := createAgent(t, e, e.Owner.Token, "Alpha line")
	num := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550170", "provider": "twilio"})
	if num.Status != http.StatusCreated {
		t.Fatalf("create number: %d %s", num.Status, num.Body)
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	csrf := e.CSRF(s)

	res := e.Do(s.Client, "POST", "/numbers/"+num.Data()["id"].(string), "", url.Values{"csrf_token": {csrf},
		"provider": {"twilio"}, "variables": {`{"my var": "x", "plan": {"tier": 1}}`}})
	if res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("number with bad variables: %d", res.Status)
	}
	page := string(res.Body)
	if !regexp.MustCompile(`<textarea id="n-vars" name="variables" rows="3" aria-invalid="true" aria-describedby="n-vars-err">`).MatchString(page) {
		t.Errorf("the number's Variables field is not marked invalid:\n%s", page)
	}
	for _, name := range []string{"my var", "plan"} {
		if !regexp.MustCompile(`<p class="err" id="n-vars-err(-1)?" data-for="n-vars">[^<]*` + name).MatchString(page) {
			t.Errorf("the fault of variable %q is not beside the Variables field:\n%s", name, page)
		}
	}

	res = e.Do(s.Client, "POST", "/agents/"+agent+"/tests", "", url.Values{"csrf_token": {csrf}, "name": {"Hours"},
		"caller": {"script"}, "script": {"When do you open?"}, "variables": {"my var=x"},
		"mock_tool": {"book"}, "mock_status": {"999"}, "mock_body": {`{"ok": true}`}})
	if res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("test with a bad variable name: %d", res.Status)
	}
	if !regexp.MustCompile(`name="variables" rows="2">my var=x</textarea></label><p class="err">[^<]*my var`).MatchString(string(res.Body)) {
		t.Errorf("the test's bad variable name is not beside its Variables field:\n%s", res.Body)
	}
	// A mock's field is named by its tool, not by the API's path (mocks.book.status).
	if page := string(res.Body); !strings.Contains(page, "Mock book status must be between") || strings.Contains(page, "mocks.book.status") {
		t.Errorf("the mock's fault is not in the form's words:\n%s", page)
	}
}

// TestFileRowFaultsBesideTheFile: a refused CSV's row faults (the API's
// rows.line_3.phone_number, recipients.line_4) were only above the form, the
// suppression list's row messages meant for beside the file never matching; each is
// beside the file field now, as the file's own faults were.
func TestFileRowFaultsBesideTheFile(t *testing.T) {
	e := testenv.Start(t)
	agent := createAgent(t, e, e.Owner.Token, "Alpha line")
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	upload := func(path string, fields map[string]string, csv string) string {
		t.Helper()
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		w.WriteField("csrf_token", e.CSRF(s))
		for k, v := range fields {
			w.WriteField(k, v)
		}
		fw, _ := w.CreateFormFile("file", "rows.csv")
		fw.Write([]byte(csv))
		w.Close()
		res := e.Do(s.Client, "POST", path, "", body.String(), "Content-Type", w.FormDataContentType())
		if res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d, want 422", path, res.Status)
		}
		return string(res.Body)
	}
	page := upload("/suppressions/import", nil, "phone_number,reason\n+14155550130,ok\nbad,x\n")
	if !regexp.MustCompile(`<p class="err" id="s-rows-err" data-for="s-file">Line 3: [^<]*</p>`).MatchString(page) {
		t.Errorf("the suppression file's bad row is not beside the file:\n%s", page)
	}
	page = upload("/campaigns", map[string]string{"name": "Spring", "agent_id": agent, "timezone": "UTC", "days": "mon",
		"start": "09:00", "end": "18:00", "max_concurrent": "1", "max_attempts": "1", "backoff_minutes": "60"},
		"phone_number,customer_name\n+14155550123,Ann\n+14155550124\n")
	if !regexp.MustCompile(`<p class="err" id="c-rows-err" data-for="c-file">Line 3 has 1 field[^<]*</p>`).MatchString(page) {
		t.Errorf("the campaign file's bad line is not beside the file:\n%s", page)
	}
}
