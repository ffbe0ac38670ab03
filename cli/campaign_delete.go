package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
)

// newCampaignDeleteCommand is `voiceapi campaign delete ID`: a finished campaign and its
// recipients (docs/campaigns.md, "Deleting a campaign").
func newCampaignDeleteCommand() *cobra.Command {
	var flags remoteFlags
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a finished campaign with its recipients (its calls stay)",
		Long: "Deletes a completed or canceled campaign with its recipients, their numbers and variables; the calls it made stay. " +
			"An open campaign is refused (cancel it first). This cannot be undone, so on a terminal it asks first; without one " +
			"(a script) it needs --yes.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			id := args[0]
			if !yes {
				if err := confirmDelete(cmd, c, id); err != nil {
					return err
				}
			}
			if err := c.Campaigns.Delete(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Campaign %s deleted with its recipients.\n", id)
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	consentFlag(cmd.Flags(), "yes")
	return cmd
}

// errNotDeleted is a delete the user declined: nothing was changed.
var errNotDeleted = errors.New("not deleted: the campaign is as it was")

// confirmDelete asks on the terminal whether to delete the campaign, naming it and its
// recipients; without a terminal there is nobody to ask, so it refuses.
func confirmDelete(cmd *cobra.Command, c *client.Client, id string) error {
	in := cmd.InOrStdin()
	if !inputIsTerminal(in) {
		return errors.New("delete cannot be undone: pass --yes to delete without a terminal to confirm on")
	}
	camp, _, err := c.Campaigns.Get(cmd.Context(), id)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "Delete campaign %s %q (%s) with its %s? This cannot be undone. [y/N] ",
		camp.ID, camp.Name, camp.Status, plural(camp.Counts.Total, "recipient"))
	return answeredYes(in, errNotDeleted)
}
