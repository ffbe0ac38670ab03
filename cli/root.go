// Package cli holds voiceapi's commands: serve and the admin subcommands.
package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Execute runs the command line and exits non-zero on error.
func Execute() {
	if err := NewRootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		os.Exit(ExitCode(err)) // 2: plan found changes
	}
}

// NewRootCommand builds the command tree writing to out and errOut.
func NewRootCommand(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "voiceapi",
		Short:         "Self-hosted control plane for voice AI agents",
		SilenceUsage:  true,
		SilenceErrors: false,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return bindEnv(cmd.Flags())
		},
	}
	// --version prints what `voiceapi version` prints.
	root.Version = currentVersion().String()
	root.SetVersionTemplate("{{.Version}}")
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(
		NewServeCommand(),
		NewUserCommand(),
		NewKeyCommand(),
		NewWorkspaceCommand(),
		NewAuditCommand(),
		NewBackupCommand(),
		NewRestoreCommand(),
		NewSubscriptionCommand(),
		NewCheckCommand(),
		NewStatsCommand(), NewCompactCommand(), NewMigrateCommand(),
		NewVersionCommand(),
		NewPlanCommand(), NewApplyCommand(), NewPullCommand(),
		NewCallsCommand(), NewChatCommand(), NewTestCommand(), NewPublishCommand(), NewCampaignCommand(), NewSuppressionsCommand(),
		NewKBCommand(), NewJobsCommand(),
	)
	return root
}

// envName is the environment variable read for a flag: VOICEAPI_<FLAG>.
func envName(flag string) string {
	return "VOICEAPI_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// consentAnnotation marks a flag that consents to something that cannot be undone or that
// grants more than the default (--yes, --force, --prune, --include-secrets, --admin). Such a
// flag is never read from the environment: a consent left in VOICEAPI_FORCE would be given
// again to every later command run from that shell, restoring over data nobody meant to
// replace or writing credentials in the clear.
const consentAnnotation = "voiceapi_consent"

// consentFlag marks the flag name of flags as a consent (see consentAnnotation).
func consentFlag(flags *pflag.FlagSet, name string) {
	if err := flags.SetAnnotation(name, consentAnnotation, []string{"true"}); err != nil {
		panic(err) // a flag the command did not define: a programming error
	}
}

// bindEnv gives every flag not set on the command line the value of its VOICEAPI_*
// variable (conventions §16), except consents, which only the command line gives.
func bindEnv(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" || f.Name == "version" {
			return
		}
		if _, consent := f.Annotations[consentAnnotation]; consent {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if setErr := flags.Set(f.Name, v); setErr != nil {
				err = fmt.Errorf("%s: %w", envName(f.Name), setErr)
			}
		}
	})
	return err
}

// dataFlag adds --data to a command's flags.
func dataFlag(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "data", "./voiceapi-data", "data directory (database, key file, uploaded files)")
}
