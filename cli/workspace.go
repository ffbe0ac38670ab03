package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
)

// NewWorkspaceCommand builds `voiceapi workspace`.
func NewWorkspaceCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "workspace", Short: "Inspect, export and import workspaces (on a stopped server's data)"}
	var loc location
	list := &cobra.Command{
		Use:   "list",
		Short: "List every workspace",
		Args:  cobra.NoArgs,
		RunE: withAdminDB(&loc, func(cmd *cobra.Command, db Backend) error {
			all, err := NewServices(db).Workspaces.ListAllWorkspaces(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tCREATED")
			for _, ws := range all {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", ws.ID, ws.Name, ws.CreatedAt.Format(data.TimeLayout))
			}
			return tw.Flush()
		}),
	}
	loc.register(list.Flags())
	cmd.AddCommand(list, newWorkspaceExportCommand(), newWorkspaceImportCommand())
	return cmd
}
