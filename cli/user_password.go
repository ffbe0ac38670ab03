package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
)

// newUserResetPasswordCommand builds `voiceapi user reset-password`: the way back in for
// an operator who lost an account's password (the owner's, say). It works on a stopped
// server's data, as every admin command does, so that only who holds the data directory
// (or the database URL) can use it.
func newUserResetPasswordCommand() *cobra.Command {
	var email string
	var loc location
	var passwordStdin bool
	cmd := &cobra.Command{
		Use:   "reset-password",
		Short: "Set a new password for a user: generated and printed, or read from stdin",
		Long: `Set a new password for the user with --email, without the old one.

Without --password-stdin a password is generated and printed on standard output, alone on
its line (so PASSWORD=$(voiceapi user reset-password --email …) keeps it); with it, the
first line of standard input is the new password. Every login session of the user ends;
the user's API keys keep working (revoke them in the console or the API). The reset is
recorded in the audit log of the user's personal workspace as user.password_changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if email == "" {
				return errors.New("user reset-password needs --email (or " + envName("email") + ")")
			}
			password, generated := "", !passwordStdin
			var err error
			if passwordStdin {
				password, err = readPasswordLine(cmd, "user reset-password")
			} else {
				password, err = randomPassword(20)
			}
			if err != nil {
				return err
			}
			db, err := loc.openAdmin(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			u, err := NewServices(db).Users.ResetPassword(cmd.Context(), email, password)
			if err != nil {
				if data.ErrorCode(err) == data.ENOTFOUND {
					return fmt.Errorf("no user with email %q (voiceapi user list shows them)", email)
				}
				return describe(err)
			}
			if generated {
				fmt.Fprintf(cmd.ErrOrStderr(), "new password for %s (%s), shown once; their login sessions are signed out:\n", u.Email, u.ID)
				fmt.Fprintln(cmd.OutOrStdout(), password)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "password of %s (%s) set; their login sessions are signed out\n", u.Email, u.ID)
			return nil
		},
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&email, "email", "", "the user's email (required)")
	f.BoolVar(&passwordStdin, "password-stdin", false, "read the new password from standard input instead of generating one")
	return cmd
}
