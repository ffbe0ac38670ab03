package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// pendingPublish is an agent apply created or changed, with the ETag its write returned.
type pendingPublish struct{ name, id, etag string }

// maybePublish notes an agent just created or changed, to publish once its tests pass,
// when --publish asks.
func (st *applyState) maybePublish(name, id, etag string) error {
	if st.publish {
		st.toPublish = append(st.toPublish, pendingPublish{name, id, etag})
	}
	return nil
}

// testRunPoll is the wait between two reads of a run apply waits for.
const testRunPoll = 500 * time.Millisecond

// publishTested runs the tests of every agent to publish on its new draft, all at once,
// and publishes them (If-Match: the ETag of apply's write) only when every run passed;
// when one did not, nothing is published. An agent without tests is published as is
// (the server's publish gate still holds for required tests). An agent whose publish
// gate is already open on its draft's revision by passing runs (a change tests cannot
// observe, such as a voice) is not tested again: a run costs minutes of model calls.
func (st *applyState) publishTested(ctx context.Context) error {
	if len(st.toPublish) == 0 {
		return nil
	}
	fmt.Fprintln(st.out, "\nTesting before publishing:")
	runs := map[string]*data.TestRun{}
	for _, p := range st.toPublish {
		gate, err := st.c.TestRuns.PublishGate(ctx, p.id)
		if err != nil {
			return fmt.Errorf("reading the publish gate of agent %q: %w", p.name, err)
		}
		if passed := passingRuns(gate); passed != nil {
			fmt.Fprintf(st.out, "  agent %q: its required tests already passed on this draft (revision %s, by %s); not run again\n",
				p.name, gate.Revision, strings.Join(passed, ", "))
			continue
		}
		tests, _, err := st.c.AgentTests.List(ctx, p.id, data.PageRequest{PerPage: 1})
		if err != nil {
			return err
		}
		if len(tests) == 0 {
			fmt.Fprintf(st.out, "  agent %q has no tests\n", p.name)
			continue
		}
		run, err := st.c.TestRuns.Start(ctx, p.id, data.TestRunCreate{})
		if err != nil {
			return fmt.Errorf("starting the tests of agent %q: %w", p.name, err)
		}
		runs[p.id] = run
	}
	var failed []string
	for _, p := range st.toPublish {
		run := runs[p.id]
		if run == nil {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, st.testTimeout)
		run, err := st.c.TestRuns.Wait(wctx, p.id, run.ID, testRunPoll)
		timedOut := wctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		if timedOut {
			return fmt.Errorf("published nothing: the tests of %q (run %s) did not end within --test-timeout %s; the changes above are applied as drafts",
				p.name, runs[p.id].ID, st.testTimeout)
		}
		if err != nil {
			return fmt.Errorf("waiting for the tests of agent %q: %w", p.name, err)
		}
		fmt.Fprintf(st.out, "agent %q:\n", p.name)
		printRun(st.out, run)
		if run.Status != data.TestPassed {
			failed = append(failed, fmt.Sprintf("%q (run %s %s)", p.name, run.ID, run.Status))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("published nothing: the tests of %s did not pass; the changes above are applied as drafts", strings.Join(failed, ", "))
	}
	var desc *string
	if st.description != "" {
		desc = &st.description
	}
	for _, p := range st.toPublish {
		if err := st.c.Agents.Publish(ctx, p.id, desc, client.IfMatch(p.etag)); err != nil {
			return fmt.Errorf("publishing agent %q: %w", p.name, err)
		}
		fmt.Fprintf(st.out, "  published agent %q\n", p.name)
	}
	return nil
}

// passingRuns are the runs that passed every required test of the gate on the draft's
// revision, nil unless the gate is open by them: an agent without required tests is
// open too, but no run vouches for its draft.
func passingRuns(g *data.PublishGate) []string {
	if g.State != data.GateOpen || len(g.Required) == 0 {
		return nil
	}
	var ids []string
	for _, t := range g.Required {
		if t.Status != data.TestPassed || t.RunID == nil {
			return nil
		}
		if !slices.Contains(ids, *t.RunID) {
			ids = append(ids, *t.RunID)
		}
	}
	return ids
}
