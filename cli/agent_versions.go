package cli

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// NewAgentCommand is `voiceapi agent`: agent tools through the API of a running server
// (publishing is `voiceapi publish`, configuration as code `voiceapi apply`).
func NewAgentCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Agent tools through the API of a running server"}
	versions := &cobra.Command{Use: "versions", Short: "An agent's published versions"}
	versions.AddCommand(newAgentVersionsListCommand(), newAgentVersionsDeleteCommand())
	cmd.AddCommand(newAgentListCommand(), versions)
	return cmd
}

func newAgentVersionsListCommand() *cobra.Command {
	var flags remoteFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list AGENT",
		Short: "List an agent's versions, newest first, marking the live one",
		Long:  "Lists the versions of AGENT (its id or its name), newest first; LIVE marks its published version.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			agent, err := findAgent(ctx, c, args[0])
			if err != nil {
				return err
			}
			seq := c.Agents.AllVersions(ctx, agent.ID)
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tLIVE\tPUBLISHED\tDESCRIPTION")
			for v, err := range seq {
				if err != nil {
					return err
				}
				live := ""
				if agent.PublishedVersion != nil && *agent.PublishedVersion == v.VersionNumber {
					live = "yes"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.VersionNumber, live, v.CreatedAt.Format(time.RFC3339), oneLine(deref(v.Description), 60))
			}
			return tw.Flush()
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	return cmd
}

func newAgentVersionsDeleteCommand() *cobra.Command {
	var flags remoteFlags
	cmd := &cobra.Command{
		Use:   "delete AGENT VERSION",
		Short: "Delete a version nothing runs on (its number is never given again)",
		Long: "Deletes version VERSION of AGENT (its id or its name). The server refuses (409) while the version is in use: " +
			"the published version, a variant of the rollout, or a version an open call or conversation runs on; the " +
			"message says which. Calls and analysis keep the number. An agent holds at most 1,000 versions: delete old " +
			"ones to publish again. See docs/agents.md.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			// One spelling, as the API's path takes it: "01" or "+1" is no version number
			// there (404), so it must not delete version 1 here.
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 || strconv.Itoa(n) != args[1] {
				return fmt.Errorf("VERSION must be a version number (1, 2, …), not %q", args[1])
			}
			c, err := flags.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			agent, err := findAgent(ctx, c, args[0])
			if err != nil {
				return err
			}
			if err := c.Agents.DeleteVersion(ctx, agent.ID, n); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted version %d of %q.\n", n, agent.Name)
			return nil
		},
	}
	flags.register(cmd.Flags())
	return cmd
}
