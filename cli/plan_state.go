package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// remote is a record as the server has it, with the ETag that guards a write to it.
type remote[T any] struct {
	rec  *T
	etag string
}

// current is the server's state, indexed by each kind's stable name. A name held by two
// records is ambiguous: plan refuses to match it (see one).
type current struct {
	agents   map[string][]*remote[data.Agent]
	kbs      map[string][]*remote[data.KnowledgeBase]
	numbers  map[string]*remote[data.Number]
	webhooks map[string][]*remote[data.Webhook]
	// name ↔ id of agents and knowledge bases, for references.
	agentIDs, kbIDs     map[string][]string
	agentName, kbName   map[string]string
	agentOrder, kbOrder []string // names, oldest first, for pull and prune
	numberOrder         []string
	webhookOrder        []string
	// tests are each agent's tests by agent id, oldest first: read by pull only (plan
	// reads an agent's tests when its file lists them, cli/plan_tests.go).
	tests map[string][]*data.AgentTest
}

// kinds says which kinds of record to read from the server.
type kinds struct{ agents, kbs, numbers, webhooks bool }

var allKinds = kinds{true, true, true, true}

// readCurrent lists the agents, knowledge bases, numbers and webhooks of the token's
// workspace that read asks for, and reads each once more for its ETag.
func readCurrent(ctx context.Context, c *client.Client, read kinds) (*current, error) {
	cur := &current{
		agents: map[string][]*remote[data.Agent]{}, kbs: map[string][]*remote[data.KnowledgeBase]{},
		numbers: map[string]*remote[data.Number]{}, webhooks: map[string][]*remote[data.Webhook]{},
		agentIDs: map[string][]string{}, kbIDs: map[string][]string{},
		agentName: map[string]string{}, kbName: map[string]string{},
	}
	steps := []struct {
		on   bool
		read func(context.Context, *client.Client) error
	}{{read.agents, cur.readAgents}, {read.kbs, cur.readKBs}, {read.numbers, cur.readNumbers}, {read.webhooks, cur.readWebhooks}}
	for _, st := range steps {
		if !st.on {
			continue
		}
		if err := st.read(ctx, c); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

func (cur *current) readAgents(ctx context.Context, c *client.Client) error {
	agents, err := client.Collect(c.Agents.All(ctx, client.AgentFilter{}))
	if err != nil {
		return err
	}
	for _, a := range reversed(agents) {
		rec, etag, err := c.Agents.Get(ctx, a.ID)
		if err != nil {
			return err
		}
		cur.agents[rec.Name] = append(cur.agents[rec.Name], &remote[data.Agent]{rec, etag})
		cur.agentIDs[rec.Name] = append(cur.agentIDs[rec.Name], rec.ID)
		cur.agentName[rec.ID] = rec.Name
		cur.agentOrder = appendNew(cur.agentOrder, rec.Name)
	}
	return nil
}

func (cur *current) readKBs(ctx context.Context, c *client.Client) error {
	kbs, err := client.Collect(c.KnowledgeBases.All(ctx))
	if err != nil {
		return err
	}
	for _, k := range reversed(kbs) {
		rec, etag, err := c.KnowledgeBases.Get(ctx, k.ID)
		if err != nil {
			return err
		}
		cur.kbs[rec.Name] = append(cur.kbs[rec.Name], &remote[data.KnowledgeBase]{rec, etag})
		cur.kbIDs[rec.Name] = append(cur.kbIDs[rec.Name], rec.ID)
		cur.kbName[rec.ID] = rec.Name
		cur.kbOrder = appendNew(cur.kbOrder, rec.Name)
	}
	return nil
}

func (cur *current) readNumbers(ctx context.Context, c *client.Client) error {
	numbers, err := client.Collect(c.Numbers.All(ctx, data.NumberFilter{}))
	if err != nil {
		return err
	}
	for _, n := range reversed(numbers) {
		rec, etag, err := c.Numbers.Get(ctx, n.ID)
		if err != nil {
			return err
		}
		cur.numbers[rec.PhoneNumber] = &remote[data.Number]{rec, etag}
		cur.numberOrder = append(cur.numberOrder, rec.PhoneNumber)
	}
	return nil
}

func (cur *current) readWebhooks(ctx context.Context, c *client.Client) error {
	hooks, err := client.Collect(c.Webhooks.All(ctx))
	if err != nil {
		return err
	}
	for _, h := range reversed(hooks) {
		rec, etag, err := c.Webhooks.Get(ctx, h.ID)
		if err != nil {
			return err
		}
		cur.webhooks[rec.URL] = append(cur.webhooks[rec.URL], &remote[data.Webhook]{rec, etag})
		cur.webhookOrder = appendNew(cur.webhookOrder, rec.URL)
	}
	return nil
}

// reversed turns a newest-first list into oldest first.
func reversed[T any](s []T) []T {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// one returns the only record under a name, nil for none, or an error when the server
// holds several (the files cannot say which one they mean).
func one[T any](m map[string][]*remote[T], kind, name string) (*remote[T], error) {
	switch rs := m[name]; len(rs) {
	case 0:
		return nil, nil
	case 1:
		return rs[0], nil
	default:
		return nil, fmt.Errorf("the server has %d %ss named %q: rename or delete all but one before planning", len(rs), kind, name)
	}
}

// toTree encodes v and decodes it as generic JSON (maps, slices, json.Number, ...).
func toTree(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	data.DecodeJSON(b, &out)
	return out
}

// equalJSON compares two values by their JSON meaning, numbers as exact decimals
// (data.SameJSON).
func equalJSON(a, b any) bool { return data.SameJSON(toTree(a), toTree(b)) }

// shown is a value as plan prints it: compact JSON, long strings cut.
//
// The value is marked rather than cut here: plan masks secrets in the whole value first and
// cuts it after (cutValues), so a cut never leaves part of a secret unmasked.
func shown(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprint(v))
	}
	return valueStart + string(b) + valueEnd
}

// The marks around a shown value; JSON encoding escapes both, so no value contains them.
const valueStart, valueEnd = "\x01", "\x02"

var markedValue = regexp.MustCompile("\x01([^\x02]*)\x02")

// cutValues cuts each marked value of a line to 100 characters and drops the marks.
func cutValues(line string) string {
	return markedValue.ReplaceAllStringFunc(line, func(m string) string {
		v := []rune(m[1 : len(m)-1])
		if len(v) > 100 {
			return string(v[:97]) + "…"
		}
		return string(v)
	})
}

// maskSecret shows a secret as the server masks it.
func maskSecret(s string) string { return data.MaskSecret(s) }

func change(path string, old, new any) string {
	return fmt.Sprintf("~ %s: %s → %s", path, shown(old), shown(new))
}

func set(path string, v any) string { return fmt.Sprintf("+ %s: %s", path, shown(v)) }

// joinNames shows a list of names.
func joinNames(names []string) string { return "[" + strings.Join(names, ", ") + "]" }
