package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// NewPublishCommand builds `voiceapi publish AGENT`: publish an agent's draft as its next
// version through the API, as the console's button does. With required tests the server's
// gate holds (conventions §22); the refusal says how to pass it from this command line.
func NewPublishCommand() *cobra.Command {
	var flags remoteFlags
	var description string
	var force bool
	cmd := &cobra.Command{
		Use:   "publish AGENT",
		Short: "Publish an agent's draft as its next version (its required tests must have passed on it)",
		Long: "Publishes the draft of AGENT (its id or its name) on a running server as its next version, and prints the " +
			"version. An agent with tests required for publish publishes only once a run of this very draft passed them: run " +
			"them first with `voiceapi test AGENT` (`voiceapi test AGENT && voiceapi publish AGENT` in a script). --force " +
			"publishes past them (owners and admins; audited as agent.published_untested). See docs/testing-agents.md.",
		Args: cobra.ExactArgs(1),
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
			var desc *string
			if cmd.Flags().Changed("description") {
				desc = &description
			}
			publish := c.Agents.Publish
			if force {
				publish = c.Agents.PublishForce
			}
			if err := publish(ctx, agent.ID, desc); err != nil {
				return publishRefusal(err, agent.Name)
			}
			now, _, err := c.Agents.Get(ctx, agent.ID)
			if err != nil {
				return err
			}
			if now.PublishedVersion == nil {
				return fmt.Errorf("the server answered the publish of %q but the agent shows no published version", agent.Name)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Published %q: version %d is live.\n", agent.Name, *now.PublishedVersion)
			return nil
		},
	}
	flags.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&description, "description", "", "what this version changes (kept with the version)")
	f.BoolVar(&force, "force", false, "publish even though required tests have not passed on the draft (owners and admins)")
	consentFlag(f, "force")
	return cmd
}

// publishRefusal adds to the gate's refusal what to run here: the server's message
// names the API's route and body.
func publishRefusal(err error, name string) error {
	var ce *client.Error
	if errors.As(err, &ce) && (ce.Code == data.ETESTSREQUIRED || ce.Code == data.ETESTSFAILED) {
		return fmt.Errorf("%w\nRun the tests on this draft with: voiceapi test %q (then publish again), or publish past them with --force (owners and admins).", err, name)
	}
	return err
}
