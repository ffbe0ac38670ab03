package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// newAgentListCommand is `voiceapi agent list`: the agents the token sees, by the API's
// filters (GET /api/v1/agents).
func newAgentListCommand() *cobra.Command {
	var flags remoteFlags
	var f client.AgentFilter
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agents the token sees, newest first",
		Long: "Lists agents, newest first, by the filters of GET /api/v1/agents: --status, --name (a part of the name, " +
			"any case) and --knowledge-base (the id of a knowledge base: the agents whose configuration or a stored " +
			"version uses it). See docs/agents.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			seq := c.Agents.All(cmd.Context(), f)
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tNAME")
			for a, err := range seq {
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", a.ID, a.Status, oneLine(a.Name, 60))
			}
			return tw.Flush()
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().StringVar(&f.Status, "status", "", "only agents in this status: draft or published")
	cmd.Flags().StringVar(&f.Name, "name", "", "only agents whose name contains this, ignoring case")
	cmd.Flags().StringVar(&f.KnowledgeBaseID, "knowledge-base", "", "only agents using this knowledge base (its id)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	return cmd
}

// NewNumberCommand is `voiceapi number`: phone numbers through the API of a running server.
func NewNumberCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "number", Short: "Phone numbers through the API of a running server"}
	cmd.AddCommand(newNumberListCommand())
	return cmd
}

func newNumberListCommand() *cobra.Command {
	var flags remoteFlags
	var f data.NumberFilter
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's numbers, newest first",
		Long: "Lists numbers, newest first, by the filters of GET /api/v1/numbers: --agent-id (bound to it inbound or " +
			"outbound) and --q (a part of the nickname, any case, or of the phone number, typed with or without +, " +
			"spaces or dashes). See docs/numbers.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			seq := c.Numbers.All(cmd.Context(), f)
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPHONE NUMBER\tNICKNAME\tCREATED")
			for n, err := range seq {
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.ID, n.PhoneNumber, oneLine(n.Nickname, 60), n.CreatedAt.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().StringVar(&f.AgentID, "agent-id", "", "only numbers bound to this agent, inbound or outbound")
	cmd.Flags().StringVar(&f.Q, "q", "", "only numbers whose nickname or phone number holds this")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	return cmd
}
