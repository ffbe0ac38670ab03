package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// errChainBroken makes `audit verify` exit non-zero once it has named every fault.
var errChainBroken = errors.New("the audit log's hash chain is broken")

// NewAuditCommand builds `voiceapi audit`.
func NewAuditCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Check the audit log (on a stopped server's data)"}
	var workspace string
	var loc location
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Recompute every workspace's event hash chain and name each event that was edited or removed",
		Args:  cobra.NoArgs,
		RunE: withAdminDB(&loc, func(cmd *cobra.Command, db Backend) error {
			problems, checked, err := NewServices(db).Audit.VerifyAuditChain(cmd.Context(), workspace)
			if err != nil {
				return err
			}
			// A workspace id with neither a workspace nor events is a typo, not a clean
			// chain (a deleted workspace's events are still checked).
			if workspace != "" && checked == 0 && len(problems) == 0 {
				exists, err := workspaceExists(cmd.Context(), db, workspace)
				if err != nil {
					return err
				}
				if !exists {
					return fmt.Errorf("--workspace %s: no such workspace and no events under that id", workspace)
				}
			}
			out := cmd.OutOrStdout()
			for _, p := range problems {
				if p.EventID == "" {
					fmt.Fprintf(out, "workspace %s: %s\n", p.WorkspaceID, p.Problem)
					continue
				}
				fmt.Fprintf(out, "workspace %s: event %s: %s\n", p.WorkspaceID, p.EventID, p.Problem)
			}
			if len(problems) > 0 {
				fmt.Fprintf(out, "%s in %s checked\n", plural(len(problems), "problem"), plural(checked, "event"))
				if unkeyed := hashMismatches(problems); unkeyed == checked && checked > 1 {
					// The hashes are keyed with the secret key: under another key every
					// event reads as edited, the likelier cause by far.
					fmt.Fprintln(out, "every event's hash differs from its content: more likely than every event edited, the secret key this command was given (VOICEAPI_SECRET_KEY, else secret.key in --data) is not the one that wrote the chain; run it with the server's key")
				}
				return errChainBroken
			}
			fmt.Fprintf(out, "ok: %s checked, every hash chain is intact\n", plural(checked, "event"))
			return nil
		}),
	}
	loc.register(verify.Flags())
	verify.Flags().StringVar(&workspace, "workspace", "", "check only this workspace (default: every workspace)")
	cmd.AddCommand(verify, newAuditRekeyCommand())
	return cmd
}

// workspaceExists looks id up among every workspace: an admin command acts for no member,
// so the members-only lookup of the API does not apply.
func workspaceExists(ctx context.Context, db Backend, id string) (bool, error) {
	all, err := NewServices(db).Workspaces.ListAllWorkspaces(ctx)
	if err != nil {
		return false, err
	}
	for _, ws := range all {
		if ws.ID == id {
			return true, nil
		}
	}
	return false, nil
}

// newAuditRekeyCommand builds `voiceapi audit rekey`: once, after upgrading from a version
// whose chain was not keyed, relink the old links under the instance's key.
func newAuditRekeyCommand() *cobra.Command {
	var workspace string
	var loc location
	cmd := &cobra.Command{
		Use:   "rekey",
		Short: "Relink audit chains written before the chain was keyed, under the instance's secret key",
		Args:  cobra.NoArgs,
		RunE: withAdminDB(&loc, func(cmd *cobra.Command, db Backend) error {
			n, err := NewServices(db).Audit.RekeyChains(cmd.Context(), workspace)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s relinked under the key; record the new heads (GET /api/v1/audit-log/head)\n", plural(n, "event"))
			return nil
		}),
	}
	loc.register(cmd.Flags())
	cmd.Flags().StringVar(&workspace, "workspace", "", "rekey only this workspace (default: every workspace)")
	return cmd
}

// hashMismatches counts the events whose own hash does not match their content.
func hashMismatches(problems []data.ChainProblem) int {
	n := 0
	for _, p := range problems {
		if strings.HasPrefix(p.Problem, service.HashMismatch) {
			n++
		}
	}
	return n
}
