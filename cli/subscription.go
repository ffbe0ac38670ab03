package cli

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
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
	var serverBound int
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
			db, err := loc.openAdmin(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := checkMaxOpenConversations(serverBound); err != nil {
				return err
			}
			svc := NewServices(db)
			// Set without a server's bound, so the subscription.updated event records the
			// plan's own limits, as before.
			set, err := svc.Subscriptions.SetSubscription(cmd.Context(), workspace, in)
			if err != nil {
				return describe(err)
			}
			// Shown as GET /api/v1/subscription shows it on a server run with serverBound:
			// open_conversations is the bound in force (the plan's, else the server's).
			svc.Conversations.Configure(service.ConversationOptions{MaxOpen: serverBound})
			shown, err := svc.Subscriptions.Subscription(cmd.Context(), workspace)
			if err != nil {
				return describe(err)
			}
			out, err := json.MarshalIndent(shown, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out)
			// Said apart from the JSON (which stays parseable on stdout): where the bound
			// comes from, which the number alone does not tell.
			byPlan := set.Limits[data.LimitOpenConversations] != nil
			fmt.Fprintf(cmd.ErrOrStderr(), "open_conversations: %s\n",
				openBoundSource(shown.Limits[data.LimitOpenConversations], byPlan, cmd.Flags().Changed("max-open-conversations")))
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
	f.IntVar(&serverBound, "max-open-conversations", data.DefaultMaxOpenConversations,
		"the server's --max-open-conversations, to show the open_conversations bound in force when the plan sets none (0 = no bound)")
	cmd.MarkFlagRequired("workspace")
	return cmd
}

// openBoundSource words the open_conversations bound in force (nil: none) and where it
// comes from: the plan's limit, else the server's --max-open-conversations, given (on
// the command line or in VOICEAPI_MAX_OPEN_CONVERSATIONS) or its default.
func openBoundSource(bound *int64, byPlan, serverGiven bool) string {
	switch {
	case byPlan:
		return fmt.Sprintf("%d (the plan's limit)", *bound)
	case bound == nil:
		return "no bound (the plan sets none, and --max-open-conversations is 0)"
	case serverGiven:
		return fmt.Sprintf("%d (the plan sets none: the server's --max-open-conversations)", *bound)
	}
	return fmt.Sprintf("%d (server default: the plan sets none; a server run with another --max-open-conversations bounds by that)", *bound)
}
