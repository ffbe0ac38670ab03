package console_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestJobsNavFollowsTheModulesWithJobs: the Jobs section is offered to members holding a
// module some job kind belongs to (data.JobModules), and to nobody else. The page itself
// still opens for the latter, empty: the API lists them no job.
func TestJobsNavFollowsTheModulesWithJobs(t *testing.T) {
	e := testenv.Start(t)
	cases := []struct {
		email   string
		modules []string
		offered bool
	}{
		{"kb@example.com", []string{data.ModuleKnowledgeBase}, true},
		{"calls@example.com", []string{data.ModuleCallHistory}, true},
		{"agents@example.com", []string{data.ModuleAgents}, true},
		{"numbers@example.com", []string{data.ModulePhoneNumbers, data.ModuleAnalytics}, false},
	}
	for _, c := range cases {
		u := e.NewUser(c.email, false)
		addMember(t, e, u, map[string]any{"role": "member", "modules": c.modules})
		s := e.SignIn(u, e.Owner.WorkspaceID)
		home := string(e.Do(s.Client, "GET", "/api-keys", "", nil).Body)
		if got := strings.Contains(home, `href="/jobs"`); got != c.offered {
			t.Errorf("%v: Jobs offered %v, want %v", c.modules, got, c.offered)
		}
		page := e.Do(s.Client, "GET", "/jobs", "", nil)
		if page.Status != http.StatusOK {
			t.Errorf("%v: the jobs page: %d", c.modules, page.Status)
		}
	}
}

// TestJobKindsAreTheRegisteredOnes: the jobs page's kind filter offers exactly the kinds
// the server registers, so none is missing and none is refused.
func TestJobKindsAreTheRegisteredOnes(t *testing.T) {
	var svc *service.Services
	e := testenv.StartWith(t, func(s *service.Services) { svc = s })
	queues, err := svc.Jobs.JobQueues(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, q := range queues {
		registered = append(registered, q.Kind)
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	page := string(e.Do(s.Client, "GET", "/jobs", "", nil).Body)
	sel := regexp.MustCompile(`(?s)<select id="j-kind".*?</select>`).FindString(page)
	var offered []string
	for _, m := range regexp.MustCompile(`<option value="([^"]+)"`).FindAllStringSubmatch(sel, -1) {
		offered = append(offered, m[1])
	}
	slices.Sort(offered)
	if !slices.Equal(offered, registered) {
		t.Errorf("the kind filter offers %v; the server registers %v", offered, registered)
	}
	// The intro names each kind the filter offers, by its label (it named six of eleven).
	found := regexp.MustCompile(`(?s)<h1>Jobs</h1>\s*<p class="hint"[^>]*>(.*?)</p>`).FindStringSubmatch(page)
	if found == nil {
		t.Fatal("the jobs page has no intro")
	}
	intro := strings.ToLower(found[1])
	labels := regexp.MustCompile(`<option value="[^"]+"[^>]*>([^<]+)</option>`).FindAllStringSubmatch(sel, -1)
	for _, l := range labels {
		if !strings.Contains(intro, strings.ToLower(l[1])) {
			t.Errorf("the jobs page's intro does not name %q: %s", l[1], intro)
		}
	}
	if len(labels) != len(registered) {
		t.Errorf("the kind filter labels %d kinds; the server registers %d", len(labels), len(registered))
	}
}
