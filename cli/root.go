// Package cli holds voiceapi's commands: serve and the admin subcommands.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Execute runs the command line and exits non-zero on error.
func Execute() {
	if err := NewRootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		os.Exit(ExitCode(err)) // 2: plan found changes; 130: interrupted
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
			// Before the environment's values: only the command line can give both.
			if err := refuseTogether(cmd); err != nil {
				return err
			}
			return bindEnv(cmd.Flags())
		},
	}
	// --version prints what `voiceapi version` prints.
	root.Version = currentVersion().String()
	root.SetVersionTemplate("{{.Version}}")
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagValueError(err) })
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
		NewCallsCommand(), NewChatCommand(), NewConversationCommand(), NewTestCommand(), NewPublishCommand(), NewCampaignCommand(), NewSuppressionsCommand(),
		NewKBCommand(), NewJobsCommand(), NewAgentCommand(), NewNumberCommand(),
	)
	refuseUnknownSubcommands(root)
	wordRemoteErrors(root)
	nameEnvironmentSources(root)
	return root
}

// refuseUnknownSubcommands makes every command group below root (calls, campaign, jobs…)
// refuse a word that names none of its commands. Cobra checks that on the root only: a
// mistyped `voiceapi campaign cancle ID` printed the group's help and exited 0, so a
// script went on as though the campaign had been canceled. Without arguments a group
// still prints its help.
func refuseUnknownSubcommands(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		refuseUnknownSubcommands(cmd)
		if !cmd.HasSubCommands() || cmd.Runnable() {
			continue
		}
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which only its own lookup sets
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return fmt.Errorf("%s\nRun '%s --help' for usage.", msg, cmd.CommandPath())
		}
		cmd.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
		cmd.DisableFlagsInUseLine = true // a group has no flags of its own to show in "Usage:"
	}
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
				err = fmt.Errorf("%s: %w", envName(f.Name), flagValueError(setErr))
			}
			if f.Annotations == nil {
				f.Annotations = map[string][]string{}
			}
			f.Annotations[fromEnvAnnotation] = []string{"true"}
		}
	})
	return err
}

// flagValueError words a flag's value that does not parse as what the flag wants, in the
// terms of the command line: pflag's own message ends in the parser's Go error
// (`strconv.ParseInt: parsing "ten": invalid syntax`). Other errors pass as they are.
func flagValueError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	var want string
	switch bad.GetFlag().Value.Type() {
	case "int", "int32", "int64":
		want = "a whole number"
		if errors.Is(err, strconv.ErrRange) {
			want = "a whole number, and this one is out of range"
		}
	case "duration":
		want = "a duration with its unit, such as 500ms, 30s, 10m or 1h30m"
	case "durationSlice":
		want = "durations with their units, comma-separated, such as 5s,30s,2m"
	case "bool":
		want = "true or false"
	default:
		return err
	}
	return &reworded{msg: fmt.Sprintf("invalid value %q for --%s: want %s", bad.GetValue(), bad.GetFlag().Name, want), err: err}
}

// dataFlag adds --data to a command's flags.
func dataFlag(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "data", "./voiceapi-data", "data directory (database, key file, uploaded files)")
}

// exclusiveAnnotation holds a command's groups of flags that may not be given together,
// one group a line, names separated by spaces.
const exclusiveAnnotation = "voiceapi_exclusive"

// exclusiveFlags says that at most one of names may be given on cmd's command line. It
// replaces cobra's MarkFlagsMutuallyExclusive, whose refusal read "if any flags in the
// group [password password-stdin] are set none of the others can be; [password
// password-stdin] were all set".
func exclusiveFlags(cmd *cobra.Command, names ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	for _, n := range names {
		if cmd.Flags().Lookup(n) == nil {
			panic("exclusiveFlags: no flag " + n) // a programming error
		}
	}
	if g := cmd.Annotations[exclusiveAnnotation]; g != "" {
		cmd.Annotations[exclusiveAnnotation] = g + "\n"
	}
	cmd.Annotations[exclusiveAnnotation] += strings.Join(names, " ")
}

// refuseTogether refuses a command line that gives two flags of one exclusive group.
func refuseTogether(cmd *cobra.Command) error {
	groups := cmd.Annotations[exclusiveAnnotation]
	if groups == "" {
		return nil
	}
	for _, group := range strings.Split(groups, "\n") {
		var given []string
		for _, n := range strings.Fields(group) {
			if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
				given = append(given, "--"+n)
			}
		}
		if len(given) > 1 {
			return fmt.Errorf("%s cannot be given together: give one of them", strings.Join(given, " and "))
		}
	}
	return nil
}

// fromEnvAnnotation marks a flag whose value bindEnv took from its VOICEAPI_* variable.
const fromEnvAnnotation = "voiceapi_from_env"

var leadingFlag = regexp.MustCompile(`^--([a-z][a-z-]*)`)

// nameEnvironmentSources makes a refusal that begins with a flag's name say so when the
// value came from the environment: with Environment=VOICEAPI_LOGIN_TTL=0 in a unit, "--login-ttl
// must be more than 0" sent the operator looking for a flag no command line had.
func nameEnvironmentSources(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		nameEnvironmentSources(sub)
	}
	if cmd.RunE == nil {
		return
	}
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		if err == nil {
			return nil
		}
		m := leadingFlag.FindStringSubmatch(err.Error())
		if m == nil {
			return err
		}
		f := cmd.Flags().Lookup(m[1])
		if f == nil || f.Annotations[fromEnvAnnotation] == nil {
			return err
		}
		rest := strings.TrimLeft(strings.TrimPrefix(err.Error(), "--"+f.Name), ": ")
		return &reworded{msg: fmt.Sprintf("--%s (from %s): %s", f.Name, envName(f.Name), rest), err: err}
	}
}
