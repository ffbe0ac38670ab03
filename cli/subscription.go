package cli

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
)

// NewSubscriptionCommand builds `voiceapi subscription`.
func NewSubscriptionCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "subscription", Short: "Set a workspace's plan and limits (on a stopped server's data)"}
	cmd.AddCommand(newSubscriptionSetCommand())
	return cmd
}

// limitFlags maps each flag to the limit it sets (conventions §13); unset, when given,
// says what -1 means for a limit it does not make unlimited.
var limitFlags = []struct{ flag, limit, unset string }{
	{"agents", data.LimitAgents, ""},
	{"knowledge-bases", data.LimitKnowledgeBases, ""},
	{"numbers", data.LimitNumbers, ""},
	{"webhooks", data.LimitWebhooks, ""},
	{"workspace-users", data.LimitWorkspaceUsers, ""},
	{"call-minutes", data.LimitCallMinutes, ""},
	{"concurrent-calls", data.LimitConcurrentCalls, ""},
	{"open-conversations", data.LimitOpenConversations, "-1 = no plan limit: the server's --max-open-conversations bounds it"},
}

func newSubscriptionSetCommand() *cobra.Command {
	var workspace, plan string
	var loc location
	values := make([]int64, len(limitFlags))
	cmd := &cobra.Command{
		Use:   "set",
		Short: "Set the plan or limits of a workspace; -1 makes a limit unlimited",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := data.SubscriptionSet{Limits: map[string]int64{}}
			if cmd.Flags().Changed("plan") {
				in.Plan = &plan
			}
			// Only the flags given change: the others keep their stored limits.
			for i, lf := range limitFlags {
				if cmd.Flags().Changed(lf.flag) {
					in.Limits[lf.limit] = values[i]
				}
			}
			db, err := loc.openAdmin(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			sub, err := NewServices(db).Subscriptions.SetSubscription(cmd.Context(), workspace, in)
			if err != nil {
				return describe(err)
			}
			out, err := json.MarshalIndent(sub, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out)
			return nil
		},
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&workspace, "workspace", "", "workspace id (required)")
	f.StringVar(&plan, "plan", "", "plan name")
	for i, lf := range limitFlags {
		unset := cmp.Or(lf.unset, "-1 = unlimited")
		f.Int64Var(&values[i], lf.flag, -1, "limit of "+lf.limit+" ("+unset+")")
	}
	cmd.MarkFlagRequired("workspace")
	return cmd
}
