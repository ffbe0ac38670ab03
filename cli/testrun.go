package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// ErrTestsFailed is what `voiceapi test` returns when the run did not pass: exit 1.
var ErrTestsFailed = errors.New("the agent's tests did not pass")

// testOptions are the flags of `voiceapi test`.
type testOptions struct {
	remoteFlags
	version int
	tests   []string
	junit   string
	timeout time.Duration
	poll    time.Duration
}

// NewTestCommand builds `voiceapi test AGENT`: run an agent's tests on a server, wait for
// the run, print each test's verdict and exit 0 (every test passed) or 1 (conventions §22,
// docs/testing-agents.md). --junit writes the results as JUnit XML for a CI system.
func NewTestCommand() *cobra.Command {
	var o testOptions
	cmd := &cobra.Command{
		Use:   "test AGENT",
		Short: "Run an agent's tests on its draft (or a version) and wait for the verdicts",
		Long: "Starts a run of AGENT's tests (AGENT is its id or its name) on a running server, shows its progress, then each " +
			"test's verdict with the criteria that failed. --junit FILE writes the results as JUnit XML (one testcase per test " +
			"and repeat), which CI systems read. Exit status: 0 every test passed, 1 a test failed or could not run, or an error.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkVersionFlag(cmd); err != nil {
				return err
			}
			err := runTests(cmd.Context(), o, args[0], cmd.OutOrStdout())
			if errors.Is(err, ErrTestsFailed) {
				cmd.SilenceErrors = true // the report is the message; the exit code says the rest
			}
			return err
		},
	}
	f := cmd.Flags()
	o.remoteFlags.register(f)
	f.IntVar(&o.version, "version", 0, "run on this published version (default: the draft)")
	f.StringArrayVar(&o.tests, "test", nil, "run only the test of this name or id; repeatable")
	f.StringVar(&o.junit, "junit", "", "write the results as JUnit XML to this file")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "longest wait for the run to end")
	f.DurationVar(&o.poll, "poll", time.Second, "wait between two reads of the run's progress")
	return cmd
}

func runTests(ctx context.Context, o testOptions, agentRef string, out io.Writer) error {
	c, err := o.client()
	if err != nil {
		return err
	}
	if err := checkPollTimeout(o.poll, o.timeout); err != nil {
		return err
	}
	if o.junit != "" {
		// Found out now, not after a run of many minutes whose report has nowhere to go.
		if err := checkWritable(o.junit); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	agent, err := findAgent(ctx, c, agentRef)
	if err != nil {
		return err
	}
	in := data.TestRunCreate{Version: data.TestRunVersion{Number: o.version}}
	if len(o.tests) > 0 {
		ids, err := testIDs(ctx, c, agent.ID, o.tests)
		if err != nil {
			return err
		}
		in.TestIDs = data.Some(ids)
	}
	run, err := c.TestRuns.Start(ctx, agent.ID, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Running %s of %q (%s), %s: run %s\n", plural(run.Summary.Tests, "test"), agent.Name, revisionName(run), plural(run.Summary.Cases, "case"), run.ID)
	run, err = waitRun(ctx, c, agent.ID, run.ID, o, out)
	if err != nil {
		return err
	}
	printRun(out, run)
	if o.junit != "" {
		if err := writeJUnit(o.junit, agent.Name, run); err != nil {
			return err
		}
		fmt.Fprintf(out, "Wrote %s.\n", o.junit)
	}
	if run.Status != data.TestPassed {
		return fmt.Errorf("%w: run %s %s", ErrTestsFailed, run.ID, run.Status)
	}
	return nil
}

// checkVersionFlag refuses a --version given below 1: versions are numbered from 1, and
// 0 or less read as the flag left out (test ran the draft, chat talked to the live
// version, neither of which was asked for).
func checkVersionFlag(cmd *cobra.Command) error {
	if v, _ := cmd.Flags().GetInt("version"); cmd.Flags().Changed("version") && v < 1 {
		return fmt.Errorf("invalid value \"%d\" for --version: want a version number, 1 or more", v)
	}
	return nil
}

// revisionName names what a run runs.
func revisionName(r *data.TestRun) string {
	if r.AgentVersion != nil {
		return fmt.Sprintf("version %d", *r.AgentVersion)
	}
	return "draft " + *r.Revision
}

// testIDs resolves test names or ids of the agent.
func testIDs(ctx context.Context, c *client.Client, agentID string, refs []string) ([]string, error) {
	tests, err := client.Collect(c.AgentTests.All(ctx, agentID))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ref := range refs {
		found := ""
		for _, t := range tests {
			if t.ID == ref || t.Name == ref {
				found = t.ID
			}
		}
		if found == "" {
			return nil, fmt.Errorf("the agent has no test named %q", ref)
		}
		if !slices.Contains(out, found) { // named twice (by name and id, say): run once
			out = append(out, found)
		}
	}
	return out, nil
}

// waitRun reads the run every poll, printing its progress when it moves, until it ends.
func waitRun(ctx context.Context, c *client.Client, agentID, runID string, o testOptions, out io.Writer) (*data.TestRun, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	shown := -1
	away := false
	tick := time.NewTicker(o.poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		run, err := c.TestRuns.Get(ctx, agentID, runID)
		switch {
		case err != nil && ctx.Err() != nil:
			continue // --timeout ran out during the read: said below, not as the read's error
		case err != nil && serverAway(err):
			// A restart or a deploy: the run is durable and goes on, so its verdict is
			// waited for rather than a CI job failed while the tests may pass.
			if !away {
				fmt.Fprintf(out, "  the server does not answer (%v); waiting for it until --timeout %s\n", err, o.timeout)
				away = true
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
			continue
		case err != nil:
			return nil, err
		}
		away = false
		if run.Summary.Done != shown {
			shown = run.Summary.Done
			fmt.Fprintf(out, "  %s: %d of %s done\n", run.Status, run.Summary.Done, plural(run.Summary.Cases, "case"))
		}
		if data.TestRunFinished(run.Status) {
			return run, nil
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("run %s has not ended after --timeout %s; it goes on: read it with GET /api/v1/agents/%s/test-runs/%s", runID, o.timeout, agentID, runID)
	}
	return nil, ctx.Err()
}

// serverAway tells a read that got no answer, or a proxy's 502, 503 or 504, from one the
// server refused: only the first kind passes by itself.
func serverAway(err error) bool {
	var ue *url.Error
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.StatusCode == http.StatusBadGateway || ce.StatusCode == http.StatusServiceUnavailable || ce.StatusCode == http.StatusGatewayTimeout
	}
	return errors.As(err, &ue)
}

// printRun writes each test's verdict and what failed.
func printRun(out io.Writer, run *data.TestRun) {
	for _, r := range run.Results {
		req := ""
		if r.Required {
			req = " [required]"
		}
		fmt.Fprintf(out, "%-7s %s%s (passed %d%% of %d)\n", strings.ToUpper(r.Status), r.Name, req, int(r.PassRate*100+0.5), len(r.Repeats))
		for _, rep := range r.Repeats {
			for _, line := range caseFaults(rep) {
				fmt.Fprintf(out, "        repeat %d: %s\n", rep.Repeat, line)
			}
			// What the agent did say: a failed criterion alone ("no turn matches") sent the
			// reader to the console or the JUnit file to find out.
			if rep.Status == data.TestFailed && len(rep.Transcript) > 0 {
				fmt.Fprintf(out, "        repeat %d transcript:\n", rep.Repeat)
				for _, line := range strings.Split(strings.TrimSuffix(agenttest.TranscriptText(rep.Transcript), "\n"), "\n") {
					fmt.Fprintf(out, "          %s\n", line)
				}
			}
		}
	}
	s := run.Summary
	fmt.Fprintf(out, "Run %s %s: %d passed, %d failed, %d error of %s.\n", run.ID, run.Status, s.Passed, s.Failed, s.Error, plural(s.Tests, "test"))
}

// caseFaults are a repeat's faults in words: its error, or each criterion that failed.
func caseFaults(rep data.TestCaseResult) []string {
	if rep.Error != nil {
		return []string{"error: " + *rep.Error}
	}
	var out []string
	for i, v := range rep.Criteria {
		if !v.Passed {
			out = append(out, fmt.Sprintf("criteria.%d %s: %s", i, v.Criterion.Type, v.Reason))
		}
	}
	return out
}

// writeJUnit writes the run as JUnit XML to path, replacing the report of an earlier run
// in one rename: a CI system reading it meanwhile, or a write cut short, never sees half a
// document.
func writeJUnit(path, agentName string, run *data.TestRun) error {
	b, err := junitXML(agentName, run)
	if err != nil {
		return err
	}
	return writeReadableFileAtomically(path, true, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
