package console_test

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestFirstStepsLeadToPages: on an empty workspace the home page's first steps each link
// to a page that opens; "Publish a version" went to /agents/versions (an agent id left
// empty: 404) until there was an agent. Run on both engines.
func TestFirstStepsLeadToPages(t *testing.T) {
	e := testenv.Start(t)
	s := e.SignIn(e.Owner, "")
	res := e.Do(s.Client, "GET", "/", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /: %d %s", res.Status, res.Body)
	}
	steps := regexp.MustCompile(`(?s)<main.*</main>`).Find(res.Body)
	links := regexp.MustCompile(`href="(/[^"#]*)`).FindAllSubmatch(steps, -1)
	if len(links) < 4 {
		t.Fatalf("the first steps have %d links, want one a step:\n%s", len(links), steps)
	}
	for _, l := range links {
		path := html.UnescapeString(string(l[1]))
		if got := e.Do(s.Client, "GET", path, "", nil); got.Status != http.StatusOK {
			t.Errorf("the first steps link to %s, which answers %d", path, got.Status)
		}
		if strings.Contains(path, "//") || strings.HasSuffix(path, "/agents/versions") {
			t.Errorf("a first step links to %s, a path with an empty id", path)
		}
	}
}
