package cli

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
)

// NewSuppressionsCommand is `voiceapi suppressions`: the workspace's suppression list,
// the numbers no campaign dials (docs/campaigns.md), through the API of a running server.
func NewSuppressionsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "suppressions", Short: "The numbers no campaign dials, through the API of a running server"}
	cmd.AddCommand(newSuppressionsListCommand(), newSuppressionsAddCommand(), newSuppressionsImportCommand(), newSuppressionsRemoveCommand())
	return cmd
}

func newSuppressionsListCommand() *cobra.Command {
	var flags remoteFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the suppression list, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			seq := c.Campaigns.AllSuppressions(cmd.Context())
			if asJSON {
				return writeNDJSON(cmd.OutOrStdout(), seq)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPHONE\tADDED\tREASON")
			for s, err := range seq {
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.PhoneNumber, s.CreatedAt.Format(time.RFC3339), oneLine(deref(s.Reason), 60))
			}
			return tw.Flush()
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON record a line (NDJSON) instead of a table")
	return cmd
}

func newSuppressionsAddCommand() *cobra.Command {
	var flags remoteFlags
	var reason string
	cmd := &cobra.Command{
		Use:   "add E164",
		Short: "Add a number (with its country code) to the suppression list",
		Long:  "Adds the number to the suppression list; a number listed already is left as it is. No campaign dials it from then on.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			in := data.SuppressionCreate{PhoneNumber: args[0]}
			if reason != "" {
				in.Reason = &reason
			}
			s, _, err := c.Campaigns.Suppress(cmd.Context(), in)
			if err != nil {
				return refusal(err, "")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is on the suppression list (%s).\n", s.PhoneNumber, s.ID)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().StringVar(&reason, "reason", "", "why the number is not to be called")
	return cmd
}

func newSuppressionsImportCommand() *cobra.Command {
	var flags remoteFlags
	cmd := &cobra.Command{
		Use:   "import FILE.csv",
		Short: "Add a CSV's numbers (phone_number column, optional reason) to the suppression list",
		Long:  "Adds every row of the CSV or, when a row is refused, none: the refusal names each bad line.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			im, err := c.Campaigns.ImportSuppressions(cmd.Context(), b)
			if err != nil {
				return refusal(err, "")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Imported %d rows: %d added, %d listed already.\n", im.Rows, im.Added, im.Duplicates)
			return nil
		},
	}
	flags.register(cmd.Flags())
	return cmd
}

func newSuppressionsRemoveCommand() *cobra.Command {
	var flags remoteFlags
	cmd := &cobra.Command{
		Use:   "remove ID",
		Short: "Remove an entry from the suppression list: campaigns may dial the number again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			if err := c.Campaigns.Unsuppress(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed %s from the suppression list.\n", args[0])
			return nil
		},
	}
	flags.register(cmd.Flags())
	return cmd
}
