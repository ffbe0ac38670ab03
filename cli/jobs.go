package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
)

// NewJobsCommand is `voiceapi jobs`: the workspace's background jobs through the API of a
// running server (docs/jobs.md, "Finding a job").
func NewJobsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "Background jobs (analysis, test runs, url fetches…) through the API of a running server"}
	cmd.AddCommand(newJobsListCommand(), newJobsShowCommand())
	return cmd
}

func newJobsListCommand() *cobra.Command {
	var flags remoteFlags
	var f data.JobFilter
	var agent, from, to string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the jobs you may read, newest first",
		Long: "Lists GET /api/v1/jobs page after page: the jobs of the token's workspace of the kinds its modules allow and " +
			"of the agents it may see, as a table, or one JSON record a line with --json. A stuck job is queued with its " +
			"attempt and last error set (waiting for a retry), or running for long; a failing one is failed. See docs/jobs.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if agent != "" {
				if f.AgentID, err = agentID(ctx, c, agent); err != nil {
					return err
				}
			}
			if f.From, err = optTime("from", from); err != nil {
				return err
			}
			if f.To, err = optTime("to", to); err != nil {
				return err
			}
			seq := c.Jobs.All(ctx, f)
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tATTEMPT\tPROGRESS\tAGENT\tCREATED\tLAST ERROR")
			for j, err := range seq {
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", j.ID, j.Kind, j.Status, j.Attempt, j.MaxAttempts,
					progressText(j.Progress), orDash(j.AgentID), j.CreatedAt.Format("2006-01-02 15:04:05"), oneLine(derefOr(j.LastError, ""), 60))
			}
			return tw.Flush()
		},
	}
	fl := cmd.Flags()
	flags.register(fl)
	fl.StringVar(&f.Kind, "kind", "", "only jobs of this kind, such as analysis.call or knowledge_base.fetch_url")
	fl.StringVar(&f.Status, "status", "", "only jobs in this status: queued, running, succeeded, failed or canceled")
	fl.StringVar(&agent, "agent", "", "only the jobs of this agent (its id or its name)")
	fl.StringVar(&from, "from", "", "only jobs created at or after this RFC 3339 time")
	fl.StringVar(&to, "to", "", "only jobs created before this RFC 3339 time")
	fl.BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	return cmd
}

func newJobsShowCommand() *cobra.Command {
	var flags remoteFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one job: its status, attempts, progress, last error and times",
		Long:  "Reads GET /api/v1/jobs/{job_id}. A job the token may not read is not found, as one that does not exist.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			j, _, err := c.Jobs.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(j)
			}
			return printJob(cmd.OutOrStdout(), j)
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job as JSON")
	return cmd
}

// printJob writes a job as labelled lines, the times that are not set left out.
func printJob(w io.Writer, j *data.Job) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(label, value string) { fmt.Fprintf(tw, "%s:\t%s\n", label, value) }
	line("id", j.ID)
	line("kind", j.Kind)
	line("status", j.Status)
	line("attempt", fmt.Sprintf("%d of %d", j.Attempt, j.MaxAttempts))
	line("progress", progressText(j.Progress))
	line("agent", orDash(j.AgentID))
	line("last error", derefOr(j.LastError, "-"))
	line("run at", j.RunAt.Format(timeLayout))
	line("created", j.CreatedAt.Format(timeLayout))
	for _, t := range []struct {
		label string
		at    *data.Time
	}{{"started", j.StartedAt}, {"finished", j.FinishedAt}} {
		if t.at != nil {
			line(t.label, t.at.Format(timeLayout))
		}
	}
	return tw.Flush()
}

const timeLayout = "2006-01-02 15:04:05Z07:00"

// progressText is done/total, or "-" before the job said.
func progressText(p data.JobProgress) string {
	if p.Total == 0 && p.Done == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", p.Done, p.Total)
}

func orDash(s *string) string { return derefOr(s, "-") }

func derefOr(s *string, or string) string {
	if s == nil {
		return or
	}
	return *s
}
