package console

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The agent's Tests tab (conventions §22, docs/testing-agents.md): its tests and their
// editor, its runs, each run's results with the transcript and every verdict, and the
// publish gate beside the publish button. Every read and write goes through the REST API
// as the signed-in user.

func (h *Handler) testRoutes() {
	m := h.mux
	m.HandleFunc("GET /agents/{id}/tests", h.page(h.testsTab))
	m.HandleFunc("GET /agents/{id}/tests/new", h.page(h.testNew))
	m.HandleFunc("POST /agents/{id}/tests", h.action(h.testCreate))
	m.HandleFunc("GET /agents/{id}/tests/{tid}", h.page(h.testEdit))
	m.HandleFunc("POST /agents/{id}/tests/{tid}", h.action(h.testUpdate))
	m.HandleFunc("GET /agents/{id}/tests/{tid}/delete", h.page(h.testDeleteConfirm))
	m.HandleFunc("POST /agents/{id}/tests/{tid}/delete", h.action(h.testDelete))
	m.HandleFunc("POST /agents/{id}/test-runs", h.action(h.testRunStart))
	m.HandleFunc("GET /agents/{id}/test-runs/{rid}", h.page(h.testRunPage))
	m.HandleFunc("GET /agents/{id}/test-runs/{rid}/progress", h.page(h.testRunProgress))
}

func agentPath(r *http.Request, rest ...string) string {
	return "/api/v1/agents/" + url.PathEscape(r.PathValue("id")) + strings.Join(rest, "")
}

// testsTab serves the Tests tab: the gate and the publish button, the tests, the runs.
func (h *Handler) testsTab(w http.ResponseWriter, r *http.Request) {
	a, err := h.call(r, "GET", agentPath(r), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// Each list pages on its own cursor: an agent may hold more tests than a page
	// (validate.MaxTestsPerAgent), and its runs grow without bound.
	in := r.URL.Query()
	tests, err := h.call(r, "GET", agentPath(r, "/tests"), pageQuery("100", in.Get("tests_cursor")), nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The runs' status filter is runs_status here (the API's status), as their cursor is
	// runs_cursor; a 422 on it (a hand-edited address) is shown beside its form.
	runsQuery := pageQuery(perPage, in.Get("runs_cursor"))
	if st := in.Get("runs_status"); st != "" {
		runsQuery.Set("status", st)
	}
	var runList []any
	var runPages pager
	runs, err := h.call(r, "GET", agentPath(r, "/test-runs"), runsQuery, nil)
	runsFail, _ := err.(*apiError)
	switch {
	case runsFail != nil && runsFail.Status == http.StatusUnprocessableEntity:
		runsFail = relabel(runsFail, fieldLabels{"status": "Status", "cursor": "Page"})
	case err != nil:
		h.fail(w, r, err)
		return
	default:
		runsFail, runList, runPages = nil, runs.List(), pagerOf(r, "runs_cursor", runs)
	}
	gate, err := h.call(r, "GET", agentPath(r, "/publish-gate"), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// Runs are labelled in words; who started each is named as the members list names
	// them (a former member by a short id).
	startedBy := names{}
	h.nameMissing(r, startedBy, h.wsPath(r)+"/users/", "name", listIDs(runList, "created_by"))
	p := data.PrincipalFrom(r.Context())
	name := str(a.Data()["name"])
	h.render(w, r, http.StatusOK, "tests", &view{Title: name + " · tests", Active: "agents", D: map[string]any{
		"Agent": a.Data(), "Tests": tests.List(), "Runs": runList, "StartedBy": startedBy, "Gate": gate.Data(),
		"TestPages": pagerOf(r, "tests_cursor", tests), "RunPages": runPages,
		"RunsStatus": in.Get("runs_status"), "RunStatuses": data.TestRunStatuses, "RunsErr": runsFail,
		"CanWrite": p.Allows(data.Write(data.ModuleAgents)) == nil, "CanForce": data.RoleAtLeast(p.Role, data.RoleAdmin),
		"CanAnalyze": p.Allows(data.Read(data.ModuleAnalytics)) == nil,
	}})
}

// testForm is the editor's content: a test as its fields show it.
type testForm struct {
	ID, ETag, Name, Caller, Script, Persona, Goal, Variables, MaxTurns, Repeat string
	Required                                                                   bool
	Mocks                                                                      []mockRow
	Criteria                                                                   []criterionRow
}

type mockRow struct{ Tool, Status, Body string }

type criterionRow struct {
	Type, Name, Arguments, Pattern, Value, Reason, Criterion string
}

// criterionTypes and endReasons feed the editor's pickers.
var endReasons = data.TestEndReasons

func (h *Handler) testNew(w http.ResponseWriter, r *http.Request) {
	// A reader is not offered the editor: the API would refuse what it sends.
	if err := data.PrincipalFrom(r.Context()).Allows(data.Write(data.ModuleAgents)); err != nil {
		h.fail(w, r, &apiError{Status: http.StatusForbidden, Code: data.EFORBIDDEN, Message: data.ErrorMessage(err)})
		return
	}
	h.renderTestForm(w, r, http.StatusOK, testForm{Caller: "script", MaxTurns: "10", Repeat: "1",
		Criteria: []criterionRow{{Type: data.CriterionSays}}}, nil)
}

func (h *Handler) testEdit(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", agentPath(r, "/tests/", url.PathEscape(r.PathValue("tid"))), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f := formOfTest(res.Data())
	f.ETag = res.ETag
	h.renderTestForm(w, r, http.StatusOK, f, nil)
}

func (h *Handler) renderTestForm(w http.ResponseWriter, r *http.Request, status int, f testForm, fail *apiError) {
	a, err := h.call(r, "GET", agentPath(r), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var tools []string
	if l, ok := lookup(a.Data(), "llm_config.tools").([]any); ok {
		for _, t := range l {
			if m, ok := t.(map[string]any); ok {
				tools = append(tools, str(m["name"]))
			}
		}
	}
	title := "New test"
	if f.ID != "" {
		title = f.Name
	}
	var mockErrs []string // mocks are keyed by tool name: their faults are listed together
	if fail != nil {
		// A mock's field is named by its tool ("Mock book status", not "The
		// mocks.book.status field"): testLabels cannot, the names being the agent's.
		labels := maps.Clone(testLabels)
		for path := range fail.Errors {
			if parts := strings.SplitN(path, ".", 3); len(parts) == 3 && parts[0] == "mocks" {
				labels[path] = "Mock " + parts[1] + " " + parts[2]
			}
		}
		fail = relabel(fail, labels)
		for _, path := range slices.Sorted(maps.Keys(fail.Errors)) {
			if strings.HasPrefix(path, "mocks") {
				mockErrs = append(mockErrs, strings.Join(fail.Errors[path], " "))
			}
		}
	}
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, status, "test", &view{Title: title, Active: "agents", Err: relabel(fail, testLabels), D: map[string]any{
		"Agent": a.Data(), "F": f, "Tools": tools, "Types": data.CriterionTypes, "Reasons": endReasons,
		"NoMock": mockRow{}, "NoCriterion": criterionRow{}, "MockErrs": mockErrs,
		"CanWrite": p.Allows(data.Write(data.ModuleAgents)) == nil,
	}})
}

func (h *Handler) testCreate(w http.ResponseWriter, r *http.Request) {
	f := formOfPost(r)
	body, typed := bodyOfForm(f)
	_, err := h.create(r, agentPath(r, "/tests"), body)
	if err == nil {
		h.done(w, r, testsTabPath(r), flash{Notice: "Test added.", At: "tests-list"})
		return
	}
	fail := withTypedFaults(err.(*apiError), typed)
	h.renderTestForm(w, r, fail.Status, f, fail)
}

func (h *Handler) testUpdate(w http.ResponseWriter, r *http.Request) {
	f := formOfPost(r)
	f.ID = r.PathValue("tid")
	body, typed := bodyOfForm(f)
	_, err := h.callIfMatch(r, "PUT", agentPath(r, "/tests/", url.PathEscape(f.ID)), f.ETag, body)
	if err == nil {
		h.done(w, r, testsTabPath(r), flash{Notice: "Test saved.", At: "tests-list"})
		return
	}
	fail := withTypedFaults(err.(*apiError), typed)
	h.renderTestForm(w, r, fail.Status, f, fail)
}

// withTypedFaults is the API's refusal with the editor's own message at each path whose
// text it sent as typed (bodyOfForm), in place of the API's, which speaks of a JSON shape
// the person never typed. Other refusals (412, 403) are kept as they are.
func withTypedFaults(e *apiError, typed map[string][]string) *apiError {
	if len(typed) == 0 || e.Status != http.StatusUnprocessableEntity {
		return e
	}
	out := *e
	out.Errors = maps.Clone(e.Errors)
	if out.Errors == nil {
		out.Errors = map[string][]string{}
	}
	maps.Copy(out.Errors, typed)
	return &out
}

// testDeleteConfirm names what deleting a test takes with it: its place in the publish
// gate; the runs that ran it keep their results.
func (h *Handler) testDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", agentPath(r, "/tests/", url.PathEscape(r.PathValue("tid"))), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	t := res.Data()
	lost := []string{"The test " + str(t["name"]) + ": its caller, criteria and mocks."}
	if required, _ := t["required_for_publish"].(bool); required {
		lost = append(lost, "Its place in the publish gate: publishing no longer waits for it to pass.")
	}
	h.confirmPage(w, r, "agents", confirmation{
		Title: "Delete the test " + str(t["name"]) + "?", Lost: lost,
		Kept:   []string{"Earlier runs and their results, this test's included."},
		Button: "Delete test", Cancel: "/agents/" + url.PathEscape(r.PathValue("id")) + "/tests/" + url.PathEscape(r.PathValue("tid")),
		Crumb: "Agents", CrumbHref: "/agents",
	}, http.StatusOK, nil)
}

func (h *Handler) testDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", agentPath(r, "/tests/", url.PathEscape(r.PathValue("tid"))), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, testsTabPath(r), flash{Notice: "Test deleted.", At: "tests-list"})
}

// testsTabPath is the agent's Tests tab, where the tests' forms lead back.
func testsTabPath(r *http.Request) string {
	return "/agents/" + url.PathEscape(r.PathValue("id")) + "/tests"
}

// testLabels names the editor's fields as its labels do, for the API's messages.
var testLabels = fieldLabels{
	"name": "Name", "max_turns": "Max turns", "repeat": "Repeat", "user": "Caller", "user.script": "Script",
	"user.persona": "Persona", "user.goal": "Goal", "variables": "Variables", "criteria": "Criteria",
	"criteria.#.type": "Criterion # type", "criteria.#.name": "Criterion # name", "criteria.#.arguments": "Criterion # arguments",
	"criteria.#.pattern": "Criterion # pattern", "criteria.#.value": "Criterion # value", "criteria.#.reason": "Criterion # reason",
	"criteria.#.criterion": "Criterion # criterion",
}

// testRunStart runs every test on the draft, or (selected) those the form checks.
func (h *Handler) testRunStart(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{}
	if r.PostFormValue("selected") != "" {
		body["test_ids"] = append([]string{}, r.PostForm["test_id"]...)
	}
	res, err := h.create(r, agentPath(r, "/test-runs"), body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/agents/"+url.PathEscape(r.PathValue("id"))+"/test-runs/"+url.PathEscape(str(res.Data()["id"])), flash{})
}

// formOfTest is a stored test as the editor shows it.
func formOfTest(t map[string]any) testForm {
	f := testForm{ID: str(t["id"]), Name: str(t["name"]), Caller: "script", MaxTurns: str(t["max_turns"]), Repeat: str(t["repeat"])}
	f.Required, _ = t["required_for_publish"].(bool)
	user, _ := t["user"].(map[string]any)
	if script, ok := user["script"].([]any); ok && len(script) > 0 {
		lines := make([]string, len(script))
		for i, s := range script {
			lines[i] = str(s)
		}
		f.Script = strings.Join(lines, "\n")
	} else {
		f.Caller, f.Persona, f.Goal = "simulated", str(user["persona"]), str(user["goal"])
	}
	vars, _ := t["variables"].(map[string]any)
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		lines = append(lines, k+"="+str(vars[k]))
	}
	f.Variables = strings.Join(lines, "\n")
	mocks, _ := t["mocks"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(mocks)) {
		m, _ := mocks[k].(map[string]any)
		body := m["body"]
		if _, isStr := body.(string); !isStr && body != nil {
			body = toJSON(body)
		}
		f.Mocks = append(f.Mocks, mockRow{Tool: k, Status: str(m["status"]), Body: str(body)})
	}
	crit, _ := t["criteria"].([]any)
	for _, c := range crit {
		m, _ := c.(map[string]any)
		row := criterionRow{Type: str(m["type"]), Name: str(m["name"]), Pattern: str(m["pattern"]), Reason: str(m["reason"]), Criterion: str(m["criterion"])}
		if m["arguments"] != nil {
			row.Arguments = toJSON(m["arguments"])
		}
		if m["value"] != nil {
			row.Value = str(m["value"])
			if b, ok := m["value"].(bool); ok {
				row.Value = strconv.FormatBool(b)
			}
		}
		f.Criteria = append(f.Criteria, row)
	}
	return f
}

// formOfPost reads the editor's form: its repeated rows of mocks and criteria by index.
func formOfPost(r *http.Request) testForm {
	v := r.PostForm
	f := testForm{ETag: v.Get("etag"), Name: v.Get("name"), Caller: v.Get("caller"), Script: v.Get("script"), Persona: v.Get("persona"),
		Goal: v.Get("goal"), Variables: v.Get("variables"), MaxTurns: v.Get("max_turns"), Repeat: v.Get("repeat"), Required: v.Get("required") != ""}
	at := func(key string, i int) string {
		if l := v[key]; i < len(l) {
			return l[i]
		}
		return ""
	}
	for i := range v["mock_tool"] {
		f.Mocks = append(f.Mocks, mockRow{Tool: at("mock_tool", i), Status: at("mock_status", i), Body: at("mock_body", i)})
	}
	for i := range v["c_type"] {
		f.Criteria = append(f.Criteria, criterionRow{Type: at("c_type", i), Name: at("c_name", i), Arguments: at("c_arguments", i),
			Pattern: at("c_pattern", i), Value: at("c_value", i), Reason: at("c_reason", i), Criterion: at("c_criterion", i)})
	}
	return f
}

// bodyOfForm is the API body of the editor's form. A value the form cannot read (a number
// that is not one, arguments that are not a JSON object, variables with a line without
// "=") goes to the API as typed, so that the API refuses it beside every other fault of
// the form in one answer, as the numbers and campaigns editors do (formInt, formObject);
// the API refuses any such value, being of the wrong JSON type. typed holds the editor's
// own message for the paths whose text only the editor reads (variables, arguments).
func bodyOfForm(f testForm) (body map[string]any, typed map[string][]string) {
	typed = map[string][]string{}
	body = map[string]any{"name": f.Name, "required_for_publish": f.Required}
	if f.Caller == "simulated" {
		body["user"] = map[string]any{"persona": f.Persona, "goal": f.Goal}
	} else {
		var script []string
		for _, l := range strings.Split(f.Script, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				script = append(script, l)
			}
		}
		body["user"] = map[string]any{"script": script}
	}
	for key, v := range map[string]string{"max_turns": f.MaxTurns, "repeat": f.Repeat} {
		if strings.TrimSpace(v) != "" {
			body[key] = formInt(v)
		}
	}
	body["variables"] = variablesOfForm(f.Variables, typed)
	mocks := map[string]any{}
	for _, m := range f.Mocks {
		if strings.TrimSpace(m.Tool) == "" {
			continue
		}
		mocks[strings.TrimSpace(m.Tool)] = map[string]any{"status": formInt(m.Status), "body": m.Body}
	}
	body["mocks"] = mocks
	body["criteria"] = criteriaOfForm(f.Criteria, typed)
	return body, typed
}

// variablesOfForm is the variables of the editor's lines (NAME=VALUE), or the text as
// typed, with its message in typed, when a line has no "=".
func variablesOfForm(text string, typed map[string][]string) any {
	vars := map[string]any{}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		k, val, ok := strings.Cut(l, "=")
		if !ok {
			typed["variables"] = []string{"Each line of variables is NAME=VALUE."}
			return text
		}
		vars[strings.TrimSpace(k)] = scalar(strings.TrimSpace(val))
	}
	return vars
}

// criteriaOfForm is the criteria of the editor's rows; arguments that are not a JSON
// object go as typed, with their message in typed.
func criteriaOfForm(rows []criterionRow, typed map[string][]string) []any {
	criteria := []any{}
	for _, c := range rows {
		if c.Type == "" {
			continue
		}
		i := strconv.Itoa(len(criteria))
		m := map[string]any{"type": c.Type}
		for k, v := range map[string]string{"name": c.Name, "pattern": c.Pattern, "reason": c.Reason, "criterion": c.Criterion} {
			if v != "" {
				m[k] = v
			}
		}
		if strings.TrimSpace(c.Arguments) != "" {
			var args map[string]any
			if data.DecodeJSON([]byte(c.Arguments), &args) != nil { // numbers kept as written
				typed["criteria."+i+".arguments"] = []string{`The arguments must be a JSON object, such as {"people": 2}.`}
				m["arguments"] = c.Arguments
			} else {
				m["arguments"] = args
			}
		}
		if c.Value != "" {
			m["value"] = scalar(c.Value)
		}
		criteria = append(criteria, m)
	}
	return criteria
}

// scalar reads a form value as a variable does: true, false and numbers as such, a
// number as written (a float64 would turn 12345678901234567890 into …7000).
func scalar(s string) any {
	switch s {
	case "true", "false":
		return s == "true"
	}
	if data.IsJSONNumber(s) {
		return json.Number(s)
	}
	return s
}
