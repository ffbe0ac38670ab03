package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/voiceapi/voiceapi/client"
)

// ErrChangesPlanned is what plan returns when the server differs from the files: the
// process exits 2 (like terraform plan -detailed-exitcode), so a pipeline can tell "no
// changes" (0), "changes" (2) and "error" (1) apart.
var ErrChangesPlanned = errors.New("changes planned")

// ErrInterrupted is what a command that catches Ctrl-C (SIGINT) returns once it has
// tidied up (chat ended its conversation, campaign show --watch stopped reading): the
// process exits 130, as a program that SIGINT ended does, so that a shell script that
// ran it stops too instead of going on as after a success.
var ErrInterrupted = errors.New("interrupted")

// ExitCode is the process exit code for a command's error: 0 for none, 2 for
// ErrChangesPlanned, 130 for ErrInterrupted, 1 for anything else (ErrTestsFailed
// included). docs/configuration.md lists them.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrChangesPlanned):
		return 2
	case errors.Is(err, ErrInterrupted):
		return 130
	default:
		return 1
	}
}

// remoteFlags are how the agents-as-code commands reach a running server.
type remoteFlags struct {
	server string
	token  string
}

func (r *remoteFlags) register(f *pflag.FlagSet) {
	f.StringVar(&r.server, "server", "http://localhost:8080", "URL of the voiceapi server")
	f.StringVar(&r.token, "token", "", "API token (or VOICEAPI_TOKEN)")
}

func (r *remoteFlags) client() (*client.Client, error) {
	if r.token == "" {
		return nil, errors.New("no token: pass --token or set VOICEAPI_TOKEN (create one with `voiceapi key create` or POST /api/v1/api-keys)")
	}
	return client.New(r.server, client.WithToken(r.token))
}

// planFlags are the flags plan and apply share.
type planFlags struct {
	remoteFlags
	file  string
	prune bool
}

func (p *planFlags) register(f *pflag.FlagSet) {
	p.remoteFlags.register(f)
	f.StringVarP(&p.file, "file", "f", "", "a state file (.yaml, .yml, .json) or a directory of them")
	f.BoolVar(&p.prune, "prune", false, "also delete what the server has and the files do not declare")
	consentFlag(f, "prune")
}

// NewPlanCommand is `voiceapi plan`: what apply would create, change and delete.
func NewPlanCommand() *cobra.Command {
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "plan -f DIR|FILE",
		Short: "Show what apply would change on the server to match the state files",
		Long: "Compares the agents, knowledge bases, numbers and webhooks the files declare with a running server " +
			"and prints what apply would create, change (field by field, credentials masked) and, with --prune, delete.\n" +
			"Exit status: 0 no changes, 2 changes planned, 1 error. See docs/agents-as-code.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := makePlan(cmd.Context(), &flags)
			if err != nil {
				return err
			}
			p.print(cmd.OutOrStdout())
			if len(p.actions) > 0 {
				cmd.SilenceErrors = true // the plan is the message; the exit code says the rest
				return ErrChangesPlanned
			}
			return nil
		},
	}
	flags.register(cmd.Flags())
	return cmd
}

// plan is the list of actions that bring the server to the files.
type plan struct {
	actions []*action
	// unmanaged counts what the server has beyond the files, when --prune is off.
	unmanaged int
	secrets   []string
	c         *client.Client
	cur       *current
	des       *desired
}

// action is one create, change or delete.
type action struct {
	op   byte // '+' create, '~' change, '-' delete
	kind string
	key  string
	// lines are the changed fields, ready to print (secrets masked).
	lines []string
	// origin is the file that declares the record ("" for a delete).
	origin string
	run    func(ctx context.Context, st *applyState) error
}

// makePlan reads the files and the server and compares them.
func makePlan(ctx context.Context, flags *planFlags) (*plan, error) {
	if flags.file == "" {
		return nil, errors.New("name the state files with -f DIR|FILE")
	}
	des, err := loadDesired(flags.file)
	if err != nil {
		return nil, err
	}
	c, err := flags.client()
	if err != nil {
		return nil, err
	}
	// Kinds the files do not declare are not read (unless pruning): a token limited to
	// the agents module can plan agents. Agents are read for numbers' references and
	// knowledge bases for agents'.
	read := allKinds
	if !flags.prune {
		read = kinds{
			agents:   len(des.agents)+len(des.numbers) > 0,
			kbs:      len(des.kbs)+len(des.agents) > 0,
			numbers:  len(des.numbers) > 0,
			webhooks: len(des.webhooks) > 0,
		}
	}
	cur, err := readCurrent(ctx, c, read)
	if err != nil {
		return nil, fmt.Errorf("reading the server's state: %w", err)
	}
	p := &plan{secrets: des.secrets, c: c, cur: cur, des: des}
	if err := p.checkReferences(flags.prune); err != nil {
		return nil, err
	}
	steps := []func() error{
		p.planKnowledgeBases, p.planAgents, func() error { return p.planTests(ctx) }, p.planNumbers, p.planWebhooks,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	p.planDeletes(flags.prune)
	return p, nil
}

// checkReferences refuses a name that points nowhere (or to what --prune deletes).
func (p *plan) checkReferences(prune bool) error {
	declaredKB, declaredAgent := map[string]bool{}, map[string]bool{}
	for _, kb := range p.des.kbs {
		declaredKB[kb.Name] = true
	}
	for _, a := range p.des.agents {
		declaredAgent[a.Name] = true
	}
	// An undeclared name must be on the server once: two records under it are ambiguous.
	exists := func(declared map[string]bool, onServer map[string][]string, name string) bool {
		return declared[name] || (!prune && len(onServer[name]) == 1)
	}
	for _, a := range p.des.agents {
		for i, kb := range a.KnowledgeBases {
			if !exists(declaredKB, p.cur.kbIDs, kb) {
				return fmt.Errorf("%s: agents[%q].knowledge_bases[%d]: no knowledge base %q is declared%s", a.origin, a.Name, i, kb, onServerNote(prune))
			}
		}
	}
	for _, n := range p.des.numbers {
		for field, ref := range map[string]*string{"inbound_agent": n.InboundAgent, "outbound_agent": n.OutboundAgent} {
			if ref != nil && !exists(declaredAgent, p.cur.agentIDs, *ref) {
				return fmt.Errorf("%s: numbers[%q].%s: no agent %q is declared%s", n.origin, n.PhoneNumber, field, *ref, onServerNote(prune))
			}
		}
	}
	return nil
}

func onServerNote(prune bool) string {
	if prune {
		return " (with --prune, one only on the server would be deleted)"
	}
	return " or on the server just once"
}

// print writes the plan, terraform-like: one block per action, then a summary.
func (p *plan) print(w io.Writer) {
	if len(p.actions) == 0 {
		fmt.Fprintln(w, "No changes: the server matches the files.")
	}
	counts := map[byte]int{}
	for _, a := range p.actions {
		counts[a.op]++
		fmt.Fprintf(w, "%c %s %q\n", a.op, a.kind, a.key)
		for _, l := range a.lines {
			fmt.Fprintf(w, "    %s\n", cutValues(p.mask(l)))
		}
	}
	if len(p.actions) > 0 {
		fmt.Fprintf(w, "\nPlan: %d to create, %d to change, %d to delete.\n", counts['+'], counts['~'], counts['-'])
	}
	if p.unmanaged > 0 {
		are, them := "are", "them"
		if p.unmanaged == 1 {
			are, them = "is", "it"
		}
		fmt.Fprintf(w, "%s on the server %s not in the files; --prune would delete %s.\n", plural(p.unmanaged, "record"), are, them)
	}
}

// mask hides every secret read from the environment.
func (p *plan) mask(s string) string {
	for _, sec := range p.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, maskSecret(sec))
		}
	}
	return s
}
