package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// chatOptions are the flags of `voiceapi chat`.
type chatOptions struct {
	remoteFlags
	draft   bool
	version int
	vars    []string
}

// NewChatCommand builds `voiceapi chat AGENT`: a turn-by-turn conversation with an agent
// of a running server, the reply streaming in (conventions §21, docs/conversations.md).
func NewChatCommand() *cobra.Command {
	var o chatOptions
	cmd := &cobra.Command{
		Use:   "chat AGENT",
		Short: "Talk to an agent in the terminal (its live version, a version or its draft)",
		Long: "Starts a conversation with AGENT (its id, or its name) on a running server and reads your messages line by line " +
			"from standard input; the agent's reply streams in, with each tool call, the knowledge it retrieved and its latency. " +
			"/end, the end of input or Ctrl-C ends the conversation and prints the call it became (after Ctrl-C the exit status is 130). --var NAME=VALUE gives a {{variable}}: " +
			"true, false and numbers are sent as such, anything else as a string.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkVersionFlag(cmd); err != nil {
				return err
			}
			err := runChat(cmd.Context(), o, args[0], cmd.InOrStdin(), cmd.OutOrStdout())
			if errors.Is(err, ErrInterrupted) {
				cmd.SilenceErrors = true // the conversation's end is printed; the exit code (130) says the rest
			}
			return err
		},
	}
	f := cmd.Flags()
	o.remoteFlags.register(f)
	f.BoolVar(&o.draft, "draft", false, "talk to the agent's draft (needs the right to write agents)")
	f.IntVar(&o.version, "version", 0, "talk to this published version (default: the live one)")
	f.StringArrayVar(&o.vars, "var", nil, "NAME=VALUE: a variable of the conversation; repeatable")
	exclusiveFlags(cmd, "draft", "version")
	return cmd
}

// chatVariables reads --var NAME=VALUE items.
func chatVariables(items []string) (map[string]any, error) {
	vars := map[string]any{}
	for _, kv := range items {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--var %q: want NAME=VALUE", kv)
		}
		switch {
		case value == "true" || value == "false":
			vars[name] = value == "true"
		case data.IsJSONNumber(value):
			vars[name] = json.Number(value) // as written: 12345678901234567890 stays that
		default:
			vars[name] = value
		}
	}
	return vars, nil
}

func runChat(ctx context.Context, o chatOptions, agentRef string, in io.Reader, out io.Writer) error {
	vars, err := chatVariables(o.vars)
	if err != nil {
		return err
	}
	c, err := o.client()
	if err != nil {
		return err
	}
	agent, err := findAgent(ctx, c, agentRef)
	if err != nil {
		return err
	}
	// Ctrl-C ends the conversation as /end does, cutting a reply short: killed instead, the
	// command left it open for 30 minutes and its call unmade until it expired.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	start := data.ConversationStart{Variables: vars, Version: data.ConversationVersion{Draft: o.draft, Number: o.version}}
	conv, err := c.Conversations.Start(ctx, agent.ID, start)
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return chatStartError(err)
	}
	which := "live"
	switch {
	case conv.AgentVersion == nil:
		which = "draft"
	case o.version > 0:
		which = "version " + strconv.Itoa(*conv.AgentVersion)
	default:
		which = "live, version " + strconv.Itoa(*conv.AgentVersion)
	}
	fmt.Fprintf(out, "Conversation %s with %s (%s). Type /end to finish.\n", conv.ID, agent.Name, which)
	p := &chatPrinter{out: out}
	for i := range conv.Messages {
		p.item(&conv.Messages[i], true)
	}
	ended, stopErr, err := chatTurns(ctx, c, conv.ID, p, in)
	if ended || err != nil {
		return err
	}
	interrupted := ctx.Err() != nil
	stop() // a second Ctrl-C while the conversation ends kills the command
	call, err := endConversation(context.WithoutCancel(ctx), c, conv.ID)
	if err != nil {
		if stopErr != nil { // why the turns stopped comes first
			return fmt.Errorf("%w (and the conversation could not be ended: %v)", stopErr, err)
		}
		return err
	}
	fmt.Fprintf(out, "The conversation ended (%s): call %s\n", deref(call.DisconnectionReason), call.ID)
	if interrupted {
		return ErrInterrupted
	}
	return stopErr
}

// chatTurns sends each line of in as a message and prints the reply, until /end, the end
// of in or of ctx (Ctrl-C), or a tool that ends the conversation (ended: it printed so).
// A failure to read in, or a refusal every later message would get too, ends the turns
// as the end of input does, stopErr saying why: the conversation is still ended, not left
// open until it expires.
func chatTurns(ctx context.Context, c *client.Client, convID string, p *chatPrinter, in io.Reader) (ended bool, stopErr, err error) {
	interactive := inputIsTerminal(in)
	lines, readErr := readLines(ctx, in)
	for {
		if interactive {
			fmt.Fprint(p.out, "you> ")
		}
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			p.interrupted(interactive)
			return false, nil, nil
		case line, ok = <-lines:
		}
		if !ok {
			return false, inputError(*readErr), nil
		}
		msg := strings.TrimSpace(line)
		if msg == "" {
			continue
		}
		if msg == "/end" {
			return false, nil, nil
		}
		turn, err := c.Conversations.SendStream(ctx, convID, msg, data.ConversationObserver{Text: p.text, Item: func(it *data.ConversationItem) error { return p.item(it, false) }})
		if ctx.Err() != nil { // interrupted during the reply
			p.interrupted(interactive)
			return false, nil, nil
		}
		p.endLine()
		if err != nil {
			var ce *client.Error
			if errors.As(err, &ce) && ce.Code != data.ECONFLICT {
				if refusedForGood(ce) {
					// Every later message would be refused as this one was (the agent
					// deleted, the token revoked, the access lowered): stop sending, and
					// still end the conversation where it can be ended.
					return false, err, nil
				}
				fmt.Fprintf(p.out, "! %s\n", ce.Message) // a provider's failure: the conversation goes on
				continue
			}
			return false, nil, err
		}
		if turn.Status == data.ConversationEnded {
			fmt.Fprintf(p.out, "The conversation ended (%s): call %s\n", deref(turn.DisconnectionReason), deref(turn.CallID))
			return true, nil, nil
		}
	}
}

// refusedForGood tells a refusal of a message that every later message would get too:
// the caller's token or access (401, 403) or the conversation or its agent gone (404).
// Other refusals (a provider's failure, a message too long, a rate limit) concern that
// message alone. A refusal inside a streamed reply (its status already 200) has the
// code alone.
func refusedForGood(e *client.Error) bool {
	switch e.Code {
	case data.EUNAUTHORIZED, data.EFORBIDDEN, data.ENOTFOUND:
		return true
	}
	return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden || e.StatusCode == http.StatusNotFound
}

// maxChatLine is the longest line chat reads; a message holds far less
// (validate.MaxConversationMessage characters), which the server says.
const maxChatLine = 1 << 20

// inputError words a failure to read standard input; nil stays nil.
func inputError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("standard input has a line longer than %d MiB: the conversation ended there", maxChatLine>>20)
	}
	return fmt.Errorf("reading standard input: %w", err)
}

// readLines reads in line by line on a goroutine of its own, so that a wait for the next
// line can be interrupted; the channel closes at the end of in, with *err its error. The
// goroutine stops sending once ctx ends.
func readLines(ctx context.Context, in io.Reader) (<-chan string, *error) {
	lines, readErr := make(chan string), new(error)
	go func() {
		defer close(lines)
		scan := bufio.NewScanner(in)
		scan.Buffer(make([]byte, 64<<10), maxChatLine)
		for scan.Scan() {
			select {
			case lines <- scan.Text():
			case <-ctx.Done():
				return
			}
		}
		*readErr = scan.Err()
	}()
	return lines, readErr
}

// endConversation ends the conversation. A reply cut short by Ctrl-C may still hold the
// conversation for a moment (409 while the server lets go of the model's answer): the
// end is asked again until it holds no more, for at most endWait.
func endConversation(ctx context.Context, c *client.Client, id string) (*data.Call, error) {
	ctx, cancel := context.WithTimeout(ctx, endWait)
	defer cancel()
	for {
		call, err := c.Conversations.End(ctx, id)
		if !client.IsCode(err, data.ECONFLICT) {
			return call, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// endWait is how long endConversation asks again.
const endWait = 15 * time.Second

// chatStartError adds to the server's refusal of a start what to do about it in this
// command's flags: the server's messages speak of the API's members ("version": "draft").
func chatStartError(err error) error {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Code {
	case data.ENOTPUBLISHED:
		return fmt.Errorf("%w\nTalk to the draft with --draft, or to a version with --version N.", err)
	case data.EMISSINGVARIABLES:
		return fmt.Errorf("%w\nGive each missing variable with --var NAME=VALUE.", err)
	}
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// findAgent resolves an agent id, or a name that exactly one agent has.
func findAgent(ctx context.Context, c *client.Client, ref string) (*data.Agent, error) {
	if strings.HasPrefix(ref, data.PrefixAgent) {
		a, _, err := c.Agents.Get(ctx, ref)
		return a, err
	}
	var found []*data.Agent
	for a, err := range c.Agents.All(ctx, client.AgentFilter{Name: ref}) {
		if err != nil {
			return nil, err
		}
		if a.Name == ref {
			found = append(found, a)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no agent is named %q", ref)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%d agents are named %q: name one by its id", len(found), ref)
}

// chatPrinter writes a conversation to the terminal: the agent's text as it streams,
// then each tool call and the knowledge retrieved, one line each.
type chatPrinter struct {
	out    io.Writer
	inLine bool
}

func (p *chatPrinter) text(delta string) error {
	if !p.inLine {
		fmt.Fprint(p.out, "agent: ")
		p.inLine = true
	}
	_, err := fmt.Fprint(p.out, delta)
	return err
}

func (p *chatPrinter) endLine() {
	if p.inLine {
		fmt.Fprintln(p.out)
		p.inLine = false
	}
}

// interrupted ends the line Ctrl-C cut short: the agent's text, or on a terminal the line
// it echoed ^C on (after the "you> " prompt, or under the line typed), so that what
// follows starts a line of its own.
func (p *chatPrinter) interrupted(terminal bool) {
	if p.inLine || terminal {
		fmt.Fprintln(p.out)
		p.inLine = false
	}
}

// item prints what an item adds to the streamed text; whole prints an agent's text too
// (the opening, which did not stream).
func (p *chatPrinter) item(it *data.ConversationItem, whole bool) error {
	switch it.Role {
	case data.ItemAgent:
		if whole && it.Content != "" {
			p.text(it.Content)
		}
		p.endLine()
		for _, k := range it.Knowledge {
			fmt.Fprintf(p.out, "  [knowledge %.2f] %s\n", k.Score, oneLine(k.Text, 100))
		}
		if it.LatencyMS != nil && it.Content != "" {
			fmt.Fprintf(p.out, "  [%d ms to the first token, %d ms in all]\n", it.LatencyMS.FirstToken, it.LatencyMS.Total)
		}
	case data.ItemTool:
		p.endLine()
		fmt.Fprintf(p.out, "  [tool] %s\n", oneLine(it.Content, 300))
	}
	return nil
}

// oneLine flattens s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
