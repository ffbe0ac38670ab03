package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
)

// NewConversationCommand is `voiceapi conversation`: the conversations of a running
// server (conventions §21, docs/conversations.md); `voiceapi chat` starts one.
func NewConversationCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "conversation", Short: "Conversations with agents through the API of a running server"}
	cmd.AddCommand(newConversationListCommand())
	return cmd
}

func newConversationListCommand() *cobra.Command {
	var flags remoteFlags
	var agent, status string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the conversations you may see, newest first",
		Long: "Lists the conversations with the agents the token may see, without their messages, as a table, or one JSON record " +
			"a line with --json.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			f := data.ConversationFilter{Status: status}
			if agent != "" {
				if f.AgentID, err = agentID(ctx, c, agent); err != nil {
					return err
				}
			}
			seq := c.Conversations.All(ctx, f)
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tAGENT\tVERSION\tSTATUS\tTURNS\tCALL\tUPDATED")
			for conv, err := range seq {
				if err != nil {
					return err
				}
				version := "draft"
				if conv.AgentVersion != nil {
					version = fmt.Sprint(*conv.AgentVersion)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", conv.ID, conv.AgentID, version, conv.Status, conv.AgentTurns,
					deref(conv.CallID), conv.UpdatedAt.Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	flags.register(f)
	f.StringVar(&agent, "agent", "", "only the conversations with this agent (its id or its name)")
	f.StringVar(&status, "status", "", "only conversations in this status: active or ended")
	f.BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	return cmd
}
