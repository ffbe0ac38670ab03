package cli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// beforeApply, when set, runs between reading the server and writing to it: tests make a
// concurrent change there.
var beforeApply func()

// applyState is what the actions of one apply share.
type applyState struct {
	c   *client.Client
	out io.Writer
	// agentID and kbID map names to ids: those read, then those created.
	agentID, kbID map[string]string
	publish       bool
	description   string
	// toPublish are the agents created or changed, published once their tests pass
	// (cli/apply_publish.go).
	toPublish   []pendingPublish
	testTimeout time.Duration
	// run names this apply in Idempotency-Keys.
	run string
}

// idempotent returns the Idempotency-Key option of one create of this run: if the
// response is lost (a proxy's 502, a timeout), the client retries and the server answers
// with the record it made, rather than making a second one.
func (st *applyState) idempotent(kind, key string) client.RequestOption {
	sum := sha256.Sum256([]byte(kind + "\x00" + key))
	return client.WithIdempotencyKey("apply-" + st.run + "-" + hex.EncodeToString(sum[:12]))
}

// NewApplyCommand is `voiceapi apply`: make the server match the state files.
func NewApplyCommand() *cobra.Command {
	var flags planFlags
	var publish bool
	var description string
	var testTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "apply -f DIR|FILE",
		Short: "Create, change and (with --prune) delete records so the server matches the state files",
		Long: "Plans as `voiceapi plan` does, prints the plan, then carries it out. Every change and delete is sent with " +
			"If-Match: a record changed on the server since it was read stops the apply with an error instead of being " +
			"overwritten. With --publish, each agent created or changed is published with --description once a run of its " +
			"tests on the new draft passed; when one does not pass, nothing is published.\n" +
			"Exit status: 0 applied (or nothing to do), 1 error. See docs/agents-as-code.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if description != "" && !publish {
				return errors.New("--description is the description of a publish: add --publish")
			}
			if testTimeout <= 0 {
				// Refused before anything is applied: the runs would time out at once,
				// after the changes had been made.
				return errors.New("--test-timeout must be more than 0")
			}
			p, err := makePlan(cmd.Context(), &flags)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			p.print(out)
			if len(p.actions) == 0 {
				return nil
			}
			if beforeApply != nil {
				beforeApply()
			}
			st := &applyState{c: p.c, out: out, agentID: uniqueIDs(p.cur.agentIDs), kbID: uniqueIDs(p.cur.kbIDs), publish: publish,
				description: description, run: runID(), testTimeout: testTimeout}
			if err := p.apply(cmd.Context(), st); err != nil {
				return err
			}
			return st.publishTested(cmd.Context())
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().BoolVar(&publish, "publish", false, "publish every agent created or changed")
	cmd.Flags().StringVar(&description, "description", "", "description of the versions --publish creates")
	cmd.Flags().DurationVar(&testTimeout, "test-timeout", 30*time.Minute, "with --publish: longest wait for the agents' test runs")
	return cmd
}

// apply carries out the plan's actions in order and stops at the first failure.
func (p *plan) apply(ctx context.Context, st *applyState) error {
	fmt.Fprintln(st.out, "\nApplying:")
	for i, a := range p.actions {
		if err := a.run(ctx, st); err != nil {
			return applyError(a, err, i, len(p.actions))
		}
		fmt.Fprintf(st.out, "  done: %c %s %q\n", a.op, a.kind, a.key)
	}
	fmt.Fprintf(st.out, "Apply complete: %s.\n", plural(len(p.actions), "change"))
	return nil
}

// applyError says which action failed, how far the apply got, and what to do.
func applyError(a *action, err error, done, total int) error {
	var ce *client.Error
	progress := fmt.Sprintf("%d of %d changes were applied before it", done, total)
	if errors.As(err, &ce) && ce.StatusCode == 412 {
		return fmt.Errorf("apply stopped: %s %q was changed on the server after this run read it (412 %s), so it was not overwritten; %s. "+
			"Run plan again to see the server's change, bring the files in line, then apply", a.kind, a.key, ce.Code, progress)
	}
	where := ""
	if a.origin != "" {
		where = " (declared in " + a.origin + ")"
	}
	return fmt.Errorf("apply stopped at %c %s %q%s: %w (%s)", a.op, a.kind, a.key, where, err, progress)
}

// agentRef resolves an agent name to its id; nil stays nil (no agent).
func (st *applyState) agentRef(name *string) (*string, error) {
	if name == nil {
		return nil, nil
	}
	id, ok := st.agentID[*name]
	if !ok {
		return nil, data.Errorf(data.ENOTFOUND, "Agent %q has no id.", *name)
	}
	return &id, nil
}

// runID is a random name for one apply.
func runID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// uniqueIDs keeps the names that one record holds.
func uniqueIDs(m map[string][]string) map[string]string {
	out := map[string]string{}
	for name, ids := range m {
		if len(ids) == 1 {
			out[name] = ids[0]
		}
	}
	return out
}
