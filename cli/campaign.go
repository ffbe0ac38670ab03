package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// NewCampaignCommand is `voiceapi campaign`: outbound campaigns through the API of a
// running server (conventions §25, docs/campaigns.md).
func NewCampaignCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "campaign", Short: "Outbound campaigns through the API of a running server"}
	cmd.AddCommand(newCampaignCreateCommand(), newCampaignListCommand(), newCampaignShowCommand(), newCampaignRecipientsCommand(),
		newCampaignActionCommand("pause", "Stop leasing the campaign's recipients (calls in progress run on)"),
		newCampaignActionCommand("resume", "Lease the paused campaign's recipients again"),
		newCampaignActionCommand("cancel", "End the campaign: its pending recipients are canceled, nothing more is dialed"),
		newCampaignDeleteCommand())
	return cmd
}

func newCampaignListCommand() *cobra.Command {
	var flags remoteFlags
	var agent, status string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the campaigns you may see, newest first",
		Long:  "Lists the campaigns of the agents the token may see, as a table, or one JSON record a line with --json.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			f := data.CampaignFilter{Status: status}
			if agent != "" {
				if f.AgentID, err = agentID(ctx, c, agent); err != nil {
					return err
				}
			}
			seq := c.Campaigns.All(ctx, f)
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tAGENT\tSTATUS\tFINISHED\tCREATED")
			for camp, err := range seq {
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\n", camp.ID, oneLine(camp.Name, 40), camp.AgentID, camp.Status,
					finished(camp.Counts), camp.Counts.Total, camp.CreatedAt.Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	flags.register(f)
	f.StringVar(&agent, "agent", "", "only the campaigns of this agent (its id or its name)")
	f.StringVar(&status, "status", "", "only campaigns in this status: scheduled, running, paused, completed or canceled")
	f.BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	return cmd
}

func newCampaignRecipientsCommand() *cobra.Command {
	var flags remoteFlags
	var asJSON bool
	var state string
	cmd := &cobra.Command{
		Use:   "recipients ID",
		Short: "List a campaign's recipients with their state and attempts",
		Long: "Lists every recipient of the campaign, newest first, page after page: a table, or one JSON record a line " +
			"(with each attempt's call, outcome and times) with --json. --state lists those in one state only " +
			"(pending: still to dial; exhausted: retried to the last attempt).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			seq := c.Campaigns.AllRecipients(cmd.Context(), args[0], data.RecipientFilter{State: state})
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPHONE\tSTATE\tOUTCOME\tATTEMPTS\tLAST CALL\tNEXT")
			for r, err := range seq {
				if err != nil {
					return err
				}
				last := ""
				if n := len(r.Attempts); n > 0 {
					last = deref(r.Attempts[n-1].CallID)
				}
				// When a pending recipient is next due: its window's opening or a retry's
				// backoff, which the table did not say (the console's did).
				next := ""
				if r.NextAt != nil {
					next = r.NextAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.PhoneNumber, r.State, deref(r.Outcome), r.AttemptCount, last, next)
			}
			return tw.Flush()
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	cmd.Flags().StringVar(&state, "state", "", "only recipients in this state: "+strings.Join(data.RecipientStates, ", "))
	return cmd
}

// newCampaignActionCommand builds pause, resume and cancel; cancel, which cannot be
// undone, is confirmed first.
func newCampaignActionCommand(verb, short string) *cobra.Command {
	var flags remoteFlags
	var yes bool
	cmd := &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			ctx, id := cmd.Context(), args[0]
			act := c.Campaigns.Pause
			switch verb {
			case "resume":
				act = c.Campaigns.Resume
			case "cancel":
				act = c.Campaigns.Cancel
			}
			if verb == "cancel" && !yes {
				if err := confirmCancel(cmd, c, id); err != nil {
					return err
				}
			}
			camp, _, err := act(ctx, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Campaign %s %q is %s: %s.\n", camp.ID, camp.Name, camp.Status, countsLine(camp.Counts))
			return nil
		},
	}
	flags.register(cmd.Flags())
	if verb == "cancel" {
		cmd.Long = "Cancels the campaign: its pending recipients become canceled and calls in progress are recorded without " +
			"retries. This cannot be undone, so on a terminal it asks first; without one (a script) it needs --yes."
		cmd.Flags().BoolVarP(&yes, "yes", "y", false, "cancel without asking")
		consentFlag(cmd.Flags(), "yes")
	}
	return cmd
}

// errNotConfirmed is a cancel the user declined: nothing was changed.
var errNotConfirmed = errors.New("not canceled: the campaign is as it was")

// confirmCancel asks on the terminal whether to cancel the campaign, naming it and what
// is left of it; without a terminal there is nobody to ask, so it refuses.
func confirmCancel(cmd *cobra.Command, c *client.Client, id string) error {
	in := cmd.InOrStdin()
	if !inputIsTerminal(in) {
		return errors.New("cancel cannot be undone: pass --yes to cancel without a terminal to confirm on")
	}
	camp, _, err := c.Campaigns.Get(cmd.Context(), id)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "Cancel campaign %s %q (%s; %d of %d recipients not finished)? Nothing more will be dialed. [y/N] ",
		camp.ID, camp.Name, camp.Status, camp.Counts.Open(), camp.Counts.Total)
	return answeredYes(in, errNotConfirmed)
}

// answeredYes reads the answer to a question asked on the terminal: nil for y or yes,
// else no (anything else leaves things as they were).
func answeredYes(in io.Reader, no error) error {
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return no
}

// inputIsTerminal reports whether r is an interactive terminal someone can answer on
// (isTerminal's test, for standard input).
func inputIsTerminal(r io.Reader) bool {
	if f, ok := r.(forcedTerminal); ok {
		return f.isTerminal()
	}
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// agentID is ref as an agent id: an id as it is (the server decides whether the caller
// may see it), a name resolved to the one agent that has it.
func agentID(ctx context.Context, c *client.Client, ref string) (string, error) {
	if strings.HasPrefix(ref, data.PrefixAgent) {
		return ref, nil
	}
	a, err := findAgent(ctx, c, ref)
	if err != nil {
		return "", err
	}
	return a.ID, nil
}

// writeNDJSON writes each item of seq as one line of JSON.
func writeNDJSON[T any](w io.Writer, seq iter.Seq2[*T, error]) error {
	enc := json.NewEncoder(w)
	for it, err := range seq {
		if err != nil {
			return err
		}
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return nil
}

// finished counts the recipients that will not be dialed again.
func finished(c data.CampaignCounts) int64 { return c.Total - c.Open() }

// countsLine words a campaign's counts: finished of total, then each state that has
// recipients, completed ones by outcome.
func countsLine(c data.CampaignCounts) string {
	parts := []string{fmt.Sprintf("%d of %d finished", finished(c), c.Total)}
	var done int64
	var outcomes []string
	for _, o := range slices.Sorted(maps.Keys(c.Completed)) {
		done += c.Completed[o]
		outcomes = append(outcomes, fmt.Sprintf("%s %d", o, c.Completed[o]))
	}
	if done > 0 {
		parts = append(parts, fmt.Sprintf("%d completed (%s)", done, strings.Join(outcomes, ", ")))
	}
	for _, s := range []struct {
		n    int64
		name string
	}{{c.InProgress, "in progress"}, {c.Pending, "pending"}, {c.Suppressed, "suppressed"}, {c.Exhausted, "exhausted"}, {c.Canceled, "canceled"}} {
		if s.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", s.n, s.name))
		}
	}
	return strings.Join(parts, ", ")
}
