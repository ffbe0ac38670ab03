package data

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// Decoding a free-form value (a map[string]any, an any) keeping its numbers' text took a
// json.Decoder with UseNumber: it copies its input into a buffer it grows by doubling
// (512 bytes at least), and a bbolt row holding one went through it whole, 2.3 KB more
// a call read (docs/performance.md, "Exact numbers"). parseFreeForm reads the value in
// place instead, and a row (a Call, an agent's configuration, a Number, a Recipient)
// takes json.Unmarshal with only its free-form members parsed so: a row type shadows
// each with a JSONObject, or a PromptConfigRow where it is nested in prompt_config, and
// holdsAny, seeing no any left, lets DecodeJSON take json.Unmarshal.

// maxFreeFormDepth is encoding/json's bound on nesting, which the Decoder enforces.
const maxFreeFormDepth = 10000

var errFreeForm = errors.New("invalid JSON")

// parseFreeForm decodes the JSON value b as a json.Decoder with UseNumber decodes it
// into an any: objects map[string]any (a member given twice: the last), arrays []any,
// numbers json.Number with their text, strings as encoding/json reads them (escapes and
// invalid UTF-8 through json.Unmarshal). Any fault is errFreeForm: callers that show an
// error take the Decoder's (FuzzParseFreeFormMatchesDecoder checks both agree).
func parseFreeForm(b []byte) (any, error) {
	p := freeFormParser{b: b}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.space(); p.i != len(b) {
		return nil, errFreeForm
	}
	return v, nil
}

type freeFormParser struct {
	b []byte
	i int
}

func (p *freeFormParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *freeFormParser) value(depth int) (any, error) {
	p.space()
	if p.i >= len(p.b) {
		return nil, errFreeForm
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.b) && isNumberByte(p.b[p.i]) {
			p.i++
		}
		if s := string(p.b[start:p.i]); IsJSONNumber(s) {
			return json.Number(s), nil
		}
	}
	return nil, errFreeForm
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func (p *freeFormParser) literal(word string) error {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return errFreeForm
	}
	p.i += len(word)
	return nil
}

func (p *freeFormParser) object(depth int) (any, error) {
	if depth > maxFreeFormDepth {
		return nil, errFreeForm
	}
	p.i++ // '{'
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		if p.space(); p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, errFreeForm
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if p.space(); p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, errFreeForm
		}
		p.i++
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		m[key] = v
		if p.space(); p.i >= len(p.b) {
			return nil, errFreeForm
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, errFreeForm
		}
	}
}

func (p *freeFormParser) array(depth int) (any, error) {
	if depth > maxFreeFormDepth {
		return nil, errFreeForm
	}
	p.i++ // '['
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if p.space(); p.i >= len(p.b) {
			return nil, errFreeForm
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, errFreeForm
		}
	}
}

// str reads the string at p.i (its opening quote).
func (p *freeFormParser) str() (string, error) {
	start := p.i
	p.i++
	escaped, wide := false, false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			text := p.b[start+1 : p.i-1]
			if !escaped && (!wide || utf8.Valid(text)) {
				return string(text), nil
			}
			// Escapes, or invalid UTF-8 (each bad byte becomes U+FFFD): encoding/json's
			// own reading, which also checks the escapes.
			var s string
			if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
				return "", errFreeForm
			}
			return s, nil
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return "", errFreeForm
		default:
			wide = wide || c >= utf8.RuneSelf
			p.i++
		}
	}
	return "", errFreeForm
}

// decodeFreeForm decodes b into *v (an any or a map[string]any) as DecodeJSON does, and
// reports false when v is neither or b is no JSON of v's kind: the caller then takes the
// Decoder, for its error.
func decodeFreeForm(b []byte, v any) bool {
	switch x := v.(type) {
	case *any:
		parsed, err := parseFreeForm(b)
		if err != nil {
			return false
		}
		*x = parsed
		return true
	case *map[string]any:
		parsed, err := parseFreeForm(b)
		if err != nil {
			return false
		}
		switch m := parsed.(type) {
		case map[string]any:
			*x = m
			return true
		case nil:
			*x = nil
			return true
		}
	}
	return false
}

// callFields is Call without its row decoding.
type callFields Call

// callRow is how a call decodes: its free-form members through JSONObject, their numbers'
// text kept, shadowing the embedded members of the same names (the shallower wins).
// TestCallRowShadowsEveryFreeFormMember keeps the list whole.
type callRow struct {
	*callFields
	Variables JSONObject `json:"variables"`
	Analysis  JSONObject `json:"analysis"`
	Metadata  JSONObject `json:"metadata"`
}

// decodeCallRow decodes a call with json.Unmarshal, as DecodeJSON would decode it whole.
func decodeCallRow(b []byte, c *Call) error {
	r := callRow{callFields: (*callFields)(c), Variables: c.Variables, Analysis: c.Analysis, Metadata: c.Metadata}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	c.Variables, c.Analysis, c.Metadata = r.Variables, r.Analysis, r.Metadata
	return nil
}

// promptConfigFields is PromptConfig without its methods.
type promptConfigFields PromptConfig

// promptConfigRow is how a prompt_config decodes: default_variables through JSONObject.
type promptConfigRow struct {
	*promptConfigFields
	DefaultVariables JSONObject `json:"default_variables"`
}

// PromptConfigRow decodes a stored prompt_config into the PromptConfig Into points at (set
// it before decoding), as DecodeJSON would, default_variables' numbers as written, with
// json.Unmarshal. A row type holding an agent's configuration shadows its prompt_config
// member with one (agentConfigRow; bolt's agent and version rows), so it holds no any to
// decode. It is for decoding only: a row type holding one is never encoded.
type PromptConfigRow struct{ Into *PromptConfig }

// UnmarshalJSON decodes b into r.Into.
func (r PromptConfigRow) UnmarshalJSON(b []byte) error {
	row := promptConfigRow{promptConfigFields: (*promptConfigFields)(r.Into), DefaultVariables: r.Into.DefaultVariables}
	if err := json.Unmarshal(b, &row); err != nil {
		return err
	}
	r.Into.DefaultVariables = row.DefaultVariables
	return nil
}

// agentConfigFields is AgentConfig without a member shadowed.
type agentConfigFields AgentConfig

// agentConfigRow is how an AgentConfig decodes (a PostgreSQL agent's or version's config).
type agentConfigRow struct {
	*agentConfigFields
	PromptConfig PromptConfigRow `json:"prompt_config"`
}

// numberFields is Number without its methods.
type numberFields Number

// numberRow is how a Number decodes (a bbolt row, read at every inbound call's start).
type numberRow struct {
	*numberFields
	Variables JSONObject `json:"variables"`
}

// recipientFields is Recipient without a member shadowed.
type recipientFields Recipient

// recipientRow is how a campaign's Recipient decodes (a row read at each dial).
type recipientRow struct {
	*recipientFields
	Variables JSONObject `json:"variables"`
}

// decodeAgentConfigRow decodes an agent's configuration as DecodeJSON would decode it whole.
func decodeAgentConfigRow(b []byte, c *AgentConfig) error {
	return json.Unmarshal(b, &agentConfigRow{agentConfigFields: (*agentConfigFields)(c), PromptConfig: PromptConfigRow{&c.PromptConfig}})
}

// decodeNumberRow decodes a number as DecodeJSON would decode it whole.
func decodeNumberRow(b []byte, n *Number) error {
	r := numberRow{numberFields: (*numberFields)(n), Variables: n.Variables}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	n.Variables = r.Variables
	return nil
}

// decodeRecipientRow decodes a recipient as DecodeJSON would decode it whole.
func decodeRecipientRow(b []byte, rc *Recipient) error {
	r := recipientRow{recipientFields: (*recipientFields)(rc), Variables: rc.Variables}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	rc.Variables = r.Variables
	return nil
}
