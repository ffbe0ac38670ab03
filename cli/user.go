package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/voiceapi/voiceapi/data"
)

// NewUserCommand builds `voiceapi user`.
func NewUserCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage user accounts (on a stopped server's data)"}
	cmd.AddCommand(newUserCreateCommand(), newUserListCommand(), newUserResetPasswordCommand())
	return cmd
}

func newUserCreateCommand() *cobra.Command {
	var email, name, password string
	var loc location
	var admin, passwordStdin bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a user and the personal workspace they own",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := missingUserFlags(cmd.Flags(), passwordStdin); err != nil {
				return err
			}
			if passwordStdin {
				var err error
				if password, err = readPasswordLine(cmd, "user create"); err != nil {
					return err
				}
			}
			db, err := loc.openAdminMayCreate(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			u, err := NewServices(db).Users.CreateUser(cmd.Context(), data.UserCreate{Name: name, Email: email, Password: password, IsAdmin: admin})
			if err != nil {
				return describe(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created user %s (%s), personal workspace %s\n", u.ID, u.Email, u.PersonalWorkspaceID)
			return nil
		},
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&email, "email", "", "email address (required)")
	f.StringVar(&name, "name", "", "display name (required)")
	f.StringVar(&password, "password", "", "password, at least 8 characters")
	f.BoolVar(&passwordStdin, "password-stdin", false, "read the password from standard input")
	f.BoolVar(&admin, "admin", false, "make the user an instance administrator")
	consentFlag(f, "admin")
	exclusiveFlags(cmd, "password", "password-stdin")
	return cmd
}

// missingUserFlags names, at once, every flag `user create` needs and did not get (from
// the command line or a VOICEAPI_* variable), saying how each is given: a bare
// "password must be at least 8 characters" would not tell which flag carries it.
func missingUserFlags(f *pflag.FlagSet, passwordStdin bool) error {
	var missing []string
	for _, name := range []string{"email", "name"} {
		if !f.Changed(name) {
			missing = append(missing, fmt.Sprintf("--%s (or %s)", name, envName(name)))
		}
	}
	if !f.Changed("password") && !passwordStdin {
		missing = append(missing, "a password: --password P, or --password-stdin to read it from standard input (or VOICEAPI_PASSWORD)")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("user create needs %s", strings.Join(missing, "; "))
}

// readPasswordLine reads one line holding a password from standard input (the
// --password-stdin of command, which the message names).
func readPasswordLine(cmd *cobra.Command, command string) (string, error) {
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading the password from standard input: %w", err)
	}
	password := strings.TrimRight(line, "\r\n")
	if password == "" {
		return "", fmt.Errorf("--password-stdin read an empty password: pipe one line holding the password, e.g. printf '%%s\\n' \"$PASSWORD\" | voiceapi %s … --password-stdin", command)
	}
	return password, nil
}

func newUserListCommand() *cobra.Command {
	var loc location
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Args:  cobra.NoArgs,
		RunE: withAdminDB(&loc, func(cmd *cobra.Command, db Backend) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tADMIN\tCREATED")
			svc := NewServices(db)
			req := data.PageRequest{PerPage: 100}
			for {
				users, page, err := svc.Users.ListUsers(cmd.Context(), req)
				if err != nil {
					return err
				}
				for _, u := range users {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", u.ID, u.Email, u.Name, u.IsAdmin, u.CreatedAt.Format(data.TimeLayout))
				}
				if page.NextCursor == nil {
					break
				}
				req.Cursor = *page.NextCursor
			}
			return tw.Flush()
		}),
	}
	loc.register(cmd.Flags())
	return cmd
}

// describe turns a validation error into one line per field for the terminal, each led by
// its dot path: the path says where in a long document (an import) the fault is.
func describe(err error) error {
	e, ok := err.(*data.Error)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	var sb strings.Builder
	sb.WriteString("invalid input: " + e.Message)
	for _, p := range e.SortedFieldPaths() {
		for _, m := range e.Fields[p] {
			sb.WriteString("\n  " + p + ": " + m)
		}
	}
	return errors.New(sb.String())
}
