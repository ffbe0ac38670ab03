package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// runView is a test run as its page shows it.
type runView struct {
	Run      map[string]any
	Finished bool
	Tests    []testResultView
	// TestName names the run's one test, for its title; empty when it ran several, or
	// before any result is in.
	TestName string
}

type testResultView struct {
	Name, Status, PassRate string
	Required               bool
	Repeats                []repeatView
}

// repeatView is one repeat: its verdicts, and its transcript with each item a verdict
// rests on highlighted (failed over passed when both).
type repeatView struct {
	ID, Repeat, Status, Error, EndReason, Latency string
	Verdicts                                      []verdictView
	Items                                         []itemView
}

type verdictView struct {
	Criterion, Reason, Anchor string
	Passed                    bool
}

type itemView struct {
	ID, Role, Content, Mark string
}

func (h *Handler) testRunPage(w http.ResponseWriter, r *http.Request) {
	run, err := h.call(r, "GET", agentPath(r, "/test-runs/", url.PathEscape(r.PathValue("rid"))), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a, err := h.call(r, "GET", agentPath(r), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := viewOfRun(run.Data())
	h.render(w, r, http.StatusOK, "testrun", &view{Title: "Test run of " + str(a.Data()["name"]), Active: "agents", D: map[string]any{"Agent": a.Data(), "V": v}})
}

// testRunProgress serves the progress fragment the run page polls; once the run has
// ended it asks htmx to reload the page, which then shows the results.
func (h *Handler) testRunProgress(w http.ResponseWriter, r *http.Request) {
	run, err := h.call(r, "GET", agentPath(r, "/test-runs/", url.PathEscape(r.PathValue("rid"))), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := viewOfRun(run.Data())
	if v.Finished {
		w.Header().Set("HX-Refresh", "true")
	}
	h.renderPart(w, r, "testrun", "progress", map[string]any{"Agent": map[string]any{"id": r.PathValue("id")}, "V": v})
}

// viewOfRun builds the run page's view from the API's run.
func viewOfRun(run map[string]any) runView {
	v := runView{Run: run, Finished: data.TestRunFinished(str(run["status"]))}
	results, _ := run["results"].([]any)
	for ti, res := range results {
		m, _ := res.(map[string]any)
		tv := testResultView{Name: str(m["name"]), Status: str(m["status"])}
		tv.Required, _ = m["required"].(bool)
		if rate, ok := m["pass_rate"].(float64); ok {
			tv.PassRate = shareOf(rate)
		}
		reps, _ := m["repeats"].([]any)
		for _, rep := range reps {
			tv.Repeats = append(tv.Repeats, viewOfRepeat(ti, rep.(map[string]any)))
		}
		v.Tests = append(v.Tests, tv)
	}
	if len(v.Tests) == 1 {
		v.TestName = v.Tests[0].Name
	}
	return v
}

func viewOfRepeat(test int, rep map[string]any) repeatView {
	id := fmt.Sprintf("t%d-r%s", test, str(rep["repeat"]))
	rv := repeatView{ID: id, Repeat: str(rep["repeat"]), Status: str(rep["status"]), Error: str(rep["error"]), EndReason: str(rep["end_reason"])}
	if l, ok := rep["latency_ms"].(map[string]any); ok {
		rv.Latency = fmt.Sprintf("median %s ms, slowest %s ms", str(l["total_p50"]), str(l["total_max"]))
	}
	marks := map[int]string{}
	crit, _ := rep["criteria"].([]any)
	for _, c := range crit {
		cm, _ := c.(map[string]any)
		vv := verdictView{Criterion: describe(cm["criterion"]), Reason: str(cm["reason"])}
		vv.Passed, _ = cm["passed"].(bool)
		if ev, ok := cm["evidence"].(map[string]any); ok {
			if n, ok := ev["item"].(float64); ok {
				i := int(n)
				vv.Anchor = fmt.Sprintf("%s-i%d", id, i)
				if !vv.Passed {
					marks[i] = "fail"
				} else if marks[i] == "" {
					marks[i] = "pass"
				}
			}
		}
		rv.Verdicts = append(rv.Verdicts, vv)
	}
	items, _ := rep["transcript"].([]any)
	for i, it := range items {
		im, _ := it.(map[string]any)
		role, content := str(im["role"]), str(im["content"])
		if role == data.ItemAgent && content == "" {
			continue // a reply that only called tools: its tools follow
		}
		rv.Items = append(rv.Items, itemView{ID: fmt.Sprintf("%s-i%d", id, i), Role: role, Content: content, Mark: marks[i]})
	}
	return rv
}

// describe is a criterion in words, as the run page lists it.
func describe(c any) string {
	m, _ := c.(map[string]any)
	switch str(m["type"]) {
	case data.CriterionToolCalled:
		s := "calls " + str(m["name"])
		if m["arguments"] != nil {
			s += " with " + toJSON(m["arguments"])
		}
		return s
	case data.CriterionToolNotCalled:
		return "does not call " + str(m["name"])
	case data.CriterionSays:
		return "says /" + str(m["pattern"]) + "/"
	case data.CriterionNotSays:
		return "never says /" + str(m["pattern"]) + "/"
	case data.CriterionVariableEquals:
		return str(m["name"]) + " = " + toJSON(m["value"])
	case data.CriterionEndsWith:
		return "how it ends: " + strings.ToLower(label(m["reason"]))
	case data.CriterionMaxLatencyMS:
		return "replies within " + str(m["value"]) + " ms"
	case data.CriterionJudge:
		return "judge: " + str(m["criterion"])
	}
	return str(m["type"])
}
