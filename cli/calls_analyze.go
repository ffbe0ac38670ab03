package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// jobWait are the flags of a command that can wait for the job it queued.
type jobWait struct {
	wait          bool
	poll, timeout time.Duration
	asJSON        bool
}

func (w *jobWait) register(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.BoolVar(&w.wait, "wait", false, "wait for the job to end and print "+what+"; exit 1 when it failed")
	f.DurationVar(&w.poll, "poll", time.Second, "wait between two reads of the job with --wait")
	f.DurationVar(&w.timeout, "timeout", 10*time.Minute, "longest wait with --wait")
	f.BoolVar(&w.asJSON, "json", false, "print the job (with --wait, what it made) as JSON")
}

// check refuses a --poll or --timeout that is not positive before anything is queued:
// a --poll of 0 read the job in a busy loop (into the rate limit), a --timeout of 0 gave
// up at once, each after the job had been asked for.
func (w *jobWait) check() error { return checkPollTimeout(w.poll, w.timeout) }

// checkPollTimeout is the check of the --poll and --timeout of a command that waits.
func checkPollTimeout(poll, timeout time.Duration) error {
	if poll <= 0 || timeout <= 0 {
		return errors.New("--poll and --timeout must be more than 0")
	}
	return nil
}

// errWaitTimedOut is the cause of a wait's context ending at --timeout (not at Ctrl-C).
var errWaitTimedOut = errors.New("--timeout ran out")

// waitJob reads the job until it ends, telling each change of its progress to changed.
func (w *jobWait) waitJob(ctx context.Context, c *client.Client, job *data.Job, changed func(*data.Job)) (*data.Job, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, w.timeout, errWaitTimedOut)
	defer cancel()
	timedOut := func() error {
		return fmt.Errorf("job %s is still %s after --timeout %s: read it with GET /api/v1/jobs/%s", job.ID, job.Status, w.timeout, job.ID)
	}
	last := *job
	for job.Status == data.JobQueued || job.Status == data.JobRunning {
		select {
		case <-ctx.Done():
			return nil, timedOut()
		case <-time.After(w.poll):
		}
		got, _, err := c.Jobs.Get(ctx, job.ID)
		if err != nil {
			if context.Cause(ctx) == errWaitTimedOut { // it ran out during the read
				return nil, timedOut()
			}
			if serverAway(err) {
				continue // a restart: the job is durable and goes on, so wait for its end
			}
			return nil, err
		}
		if got.Status != last.Status || got.Progress != last.Progress {
			changed(got)
		}
		job, last = got, *got
	}
	if job.Status != data.JobSucceeded {
		why := "no error recorded"
		if job.LastError != nil {
			why = *job.LastError
		}
		return job, fmt.Errorf("job %s %s after %s: %s", job.ID, job.Status, plural(job.Attempt, "attempt"), why)
	}
	return job, nil
}

func newCallsAnalyzeCommand() *cobra.Command {
	var flags remoteFlags
	var w jobWait
	cmd := &cobra.Command{
		Use:   "analyze CALL_ID",
		Short: "Have the call's agent model fill its analysis (POST /calls/{id}/analyze); --wait prints it",
		Long: "Queues the post-call analysis of CALL_ID by its agent version's own model, as a durable job, and prints " +
			"the job. With --wait it follows the job to its end and prints the call's analysis (--json: the call as JSON); " +
			"exit status 1 when the analysis failed, with the reason. See docs/analysis.md.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := w.check(); err != nil {
				return err
			}
			c, err := flags.client()
			if err != nil {
				return err
			}
			job, err := c.Calls.Analyze(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return w.analyzed(cmd.Context(), c, cmd.OutOrStdout(), args[0], job)
		},
	}
	flags.register(cmd.Flags())
	w.register(cmd, "the analysis")
	return cmd
}

// analyzed prints the queued job, or with --wait the call's analysis once the job ended.
func (w *jobWait) analyzed(ctx context.Context, c *client.Client, out io.Writer, callID string, job *data.Job) error {
	if !w.wait {
		if w.asJSON {
			return json.NewEncoder(out).Encode(job)
		}
		fmt.Fprintf(out, "Analysis of %s queued: job %s (%s). Add --wait to follow it.\n", callID, job.ID, job.Status)
		return nil
	}
	if _, err := w.waitJob(ctx, c, job, func(*data.Job) {}); err != nil {
		return err
	}
	call, _, err := c.Calls.Get(ctx, callID)
	if err != nil {
		return err
	}
	if w.asJSON {
		return json.NewEncoder(out).Encode(call)
	}
	fmt.Fprintf(out, "Call %s analyzed:\n", callID)
	for _, k := range slices.Sorted(maps.Keys(call.Analysis)) {
		v, _ := json.Marshal(call.Analysis[k])
		if s, ok := call.Analysis[k].(string); ok {
			v = []byte(s)
		}
		fmt.Fprintf(out, "  %s: %s\n", k, v)
	}
	return nil
}

func newCallsBackfillCommand() *cobra.Command {
	var flags remoteFlags
	var w jobWait
	var from, to string
	var version int
	cmd := &cobra.Command{
		Use:   "backfill AGENT --from TIME --to TIME",
		Short: "Analyze AGENT's calls of a range again (POST /agents/{id}/analysis/backfill); --wait follows it",
		Long: "Queues one job that analyzes the calls of AGENT (its id or its name) created in [--from, --to) with the " +
			"analysis_config of --version (default: the published version, else the current configuration): the way to " +
			"fill a field added since on past calls. With --wait it prints the job's progress to its end; exit status 1 " +
			"when it failed. See docs/analysis.md.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := w.check(); err != nil {
				return err
			}
			if err := checkVersionFlag(cmd); err != nil {
				return err
			}
			if from == "" || to == "" {
				return errors.New("give the range with --from and --to (RFC 3339 times such as 2026-11-01T00:00:00Z)")
			}
			in := data.AnalysisBackfill{}
			for _, t := range []struct {
				name, value string
				into        *data.Time
			}{{"from", from, &in.From}, {"to", to, &in.To}} {
				v, err := optTime(t.name, t.value)
				if err != nil {
					return err
				}
				*t.into = data.NewTime(v)
			}
			if cmd.Flags().Changed("version") {
				in.AgentVersion = &version
			}
			c, err := flags.client()
			if err != nil {
				return err
			}
			agent, err := findAgent(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			job, err := c.Agents.BackfillAnalysis(cmd.Context(), agent.ID, in)
			if err != nil {
				return err
			}
			return w.backfilled(cmd.Context(), c, cmd.OutOrStdout(), agent, job)
		},
	}
	flags.register(cmd.Flags())
	w.register(cmd, "its progress")
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the first call's creation time, RFC 3339 (inclusive)")
	f.StringVar(&to, "to", "", "the end of the range, RFC 3339 (exclusive)")
	f.IntVar(&version, "version", 0, "analyze with this version's analysis_config")
	return cmd
}

// backfilled prints the queued backfill, or with --wait its progress to its end.
func (w *jobWait) backfilled(ctx context.Context, c *client.Client, out io.Writer, agent *data.Agent, job *data.Job) error {
	progress := func(j *data.Job) {
		if !w.asJSON {
			fmt.Fprintf(out, "  %s: %d of %s done\n", j.Status, j.Progress.Done, plural(j.Progress.Total, "call"))
		}
	}
	if !w.wait {
		if w.asJSON {
			return json.NewEncoder(out).Encode(job)
		}
		fmt.Fprintf(out, "Backfill of %s queued: job %s (%s). Add --wait to follow it.\n", agent.Name, job.ID, job.Status)
		return nil
	}
	if !w.asJSON {
		fmt.Fprintf(out, "Backfill of %s: job %s\n", agent.Name, job.ID)
	}
	end, err := w.waitJob(ctx, c, job, progress)
	if err != nil {
		return err
	}
	if w.asJSON {
		return json.NewEncoder(out).Encode(end)
	}
	fmt.Fprintf(out, "Backfill %s succeeded: %s looked at.\n", end.ID, plural(end.Progress.Done, "call"))
	return nil
}
