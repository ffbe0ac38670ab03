package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 30, point 9: a new workspace shows what to do first (create an agent, try it,
// publish, connect a number) instead of empty tables, and ticks each step once done.
func TestFirstSteps(t *testing.T) {
	b := signedIn(t)
	b.open("/")
	steps := b.text("main")
	for _, s := range []string{"Create an agent", "Try it", "Publish", "Connect a number"} {
		if !strings.Contains(steps, s) {
			t.Errorf("the first page of a new workspace does not say %q:\n%s", s, steps)
		}
	}
	if b.count("table") != 0 {
		t.Errorf("the first page of a new workspace shows tables")
	}
	b.followText("Create an agent")
	b.run("create", chromedp.SendKeys("#new-agent-name", "First agent", chromedp.ByQuery))
	b.submit("#new-agent-name")
	b.open("/")
	if n := b.count("ol.steps li.done"); n != 1 {
		t.Errorf("after creating an agent %d steps are ticked, want 1", n)
	}
	// The empty lists say what they are for.
	b.open("/numbers")
	if s := b.text("main"); !strings.Contains(s, "No numbers yet") {
		t.Errorf("the empty numbers page: %q", s)
	}
}
