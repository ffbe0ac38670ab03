package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
)

// NewKeyCommand builds `voiceapi key`.
func NewKeyCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Manage API keys (on a stopped server's data)"}
	cmd.AddCommand(newKeyCreateCommand())
	return cmd
}

func newKeyCreateCommand() *cobra.Command {
	var email, name, workspace, expiration string
	var scopes, agentIDs []string
	var loc location
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an API key for a user; prints the token once",
		Args:  cobra.NoArgs,
		RunE: withAdminDB(&loc, func(cmd *cobra.Command, db Backend) error {
			svc := NewServices(db)
			u, err := svc.Users.UserByEmail(cmd.Context(), email)
			if err != nil {
				return fmt.Errorf("no user with email %q", email)
			}
			if workspace == "" {
				workspace = u.PersonalWorkspaceID
			}
			// The same rules as POST /api/v1/api-keys: a scope or agent the API refuses is
			// refused here with the same fault (scopes.0, agent_ids.0).
			in := data.APIKeyCreate{Name: name, Scopes: scopes, AgentIDs: agentIDs}
			if expiration != "" {
				in.Expiration = &expiration
			}
			key, token, err := svc.Auth.CreateAPIKeyFor(cmd.Context(), u.ID, workspace, in)
			if err != nil {
				return describe(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "created API key %d %q for %s in workspace %s; the token is shown once:\n", key.ID, key.Name, u.Email, workspace)
			fmt.Fprintln(cmd.OutOrStdout(), token)
			return nil
		}),
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&email, "email", "", "the user's email (required)")
	f.StringVar(&name, "name", "cli", "a name for the key")
	f.StringVar(&workspace, "workspace", "", "workspace id the token acts in (default: the user's personal workspace)")
	f.StringVar(&expiration, "expiration", "", "expiry date YYYY-MM-DD (default: never)")
	f.StringArrayVar(&scopes, "scope", nil, "limit the key to a scope, e.g. calls:runtime (repeatable; default: the user's full rights)")
	f.StringArrayVar(&agentIDs, "agent", nil, "limit the key to an agent id (repeatable; default: every agent the user may reach)")
	cmd.MarkFlagRequired("email")
	return cmd
}
