package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// State files in YAML are read and written here, node by node, so that a number keeps the
// text it was written with: decoding YAML into Go's any (what sigs.k8s.io/yaml did) turns
// 12345678901234567890123 into a float64, and apply would then write the rounded number
// (docs/agents-as-code.md "Numbers"). A plain scalar means what YAML 1.1 said it means, as
// that reader had it (yes, on and y are true), except where that silently changed a
// number; docs/agents-as-code.md "YAML" lists the differences.

// readYAML reads one YAML document into a generic JSON tree, as data.DecodeJSON makes
// them: map[string]any, []any, string, bool, nil and json.Number, each number's text kept
// (only reworded where YAML's form is not JSON's: +1 → 1, .5 → 0.5, 0x1F → 31). Empty
// input is nil. An error names the line.
func readYAML(raw []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	// A second document was silently dropped by the former reader: refuse it instead,
	// unless it is empty (a trailing ---).
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if v, err := newYAMLReader(&more).value(&more); err != nil || v != nil {
			return nil, fmt.Errorf("line %d: a second YAML document: a file holds one (split it into files of a directory)", more.Line)
		}
	}
	return newYAMLReader(&doc).value(&doc)
}

// yamlReader turns nodes into values, expanding aliases within a budget: a few lines of
// nested aliases ("billion laughs") would otherwise expand into gigabytes.
type yamlReader struct {
	budget    int
	expanding map[*yaml.Node]bool // the anchors being expanded: one inside itself is a loop
}

func newYAMLReader(doc *yaml.Node) *yamlReader {
	return &yamlReader{budget: 10_000 + 100*countNodes(doc), expanding: map[*yaml.Node]bool{}}
}

func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

func nodeError(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", n.Line, fmt.Sprintf(format, args...))
}

func (r *yamlReader) value(n *yaml.Node) (any, error) {
	if r.budget--; r.budget < 0 {
		return nil, nodeError(n, "aliases expand into too many values")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return r.value(n.Content[0])
	case yaml.AliasNode:
		if r.expanding[n.Alias] {
			return nil, nodeError(n, "the alias *%s is inside its own anchor", n.Value)
		}
		r.expanding[n.Alias] = true
		defer delete(r.expanding, n.Alias)
		return r.value(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := r.value(item)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		return out, r.mapping(n, out, map[string]*yaml.Node{})
	case yaml.ScalarNode:
		return scalarValue(n)
	}
	return nil, nodeError(n, "unknown YAML node")
}

// mapping adds n's members to out. A key written twice is refused (YAML forbids it; the
// former reader kept the last silently). Members merged in with <<: *anchor give way to
// the mapping's own wherever they are written, and of a list of merged mappings the
// first listed wins, as YAML's merge key has it.
func (r *yamlReader) mapping(n *yaml.Node, out map[string]any, seen map[string]*yaml.Node) error {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		for k.Kind == yaml.AliasNode {
			k = k.Alias
		}
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nodeError(k, "a key must be a scalar")
		}
		// A key is its text: JSON keys are strings, and `on:` or `0x1F:` mean the keys
		// on and 0x1F.
		if first, dup := seen[k.Value]; dup {
			return nodeError(k, "the key %q is already written on line %d", k.Value, first.Line)
		}
		seen[k.Value] = k
		val, err := r.value(v)
		if err != nil {
			return err
		}
		out[k.Value] = val
	}
	for _, m := range merges {
		if err := r.merge(m, out); err != nil {
			return err
		}
	}
	return nil
}

// merge adds the members of a merged mapping (or of each in a list, the first first)
// that out does not have yet.
func (r *yamlReader) merge(m *yaml.Node, out map[string]any) error {
	target := m
	for target.Kind == yaml.AliasNode {
		target = target.Alias
	}
	var sources []*yaml.Node
	switch target.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{m}
	case yaml.SequenceNode:
		sources = target.Content
	default:
		return nodeError(m, "<< takes a mapping or a list of mappings")
	}
	for _, s := range sources {
		v, err := r.value(s)
		if err != nil {
			return err
		}
		members, ok := v.(map[string]any)
		if !ok {
			return nodeError(s, "<< takes a mapping or a list of mappings")
		}
		for k, val := range members {
			if _, has := out[k]; !has {
				out[k] = val
			}
		}
	}
	return nil
}

// scalarValue is a scalar's value: quoted and block scalars are strings; a plain one
// resolves as YAML 1.1 (plainValue); an explicit tag (!!str, !!int, !!float, !!bool,
// !!null, !!timestamp) is obeyed.
func scalarValue(n *yaml.Node) (any, error) {
	if n.Style&yaml.TaggedStyle == 0 {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return n.Value, nil
		}
		v, err := plainValue(n.Value)
		if err != nil {
			return nil, nodeError(n, "%v", err)
		}
		return v, nil
	}
	switch n.Tag {
	case "!!str", "!!timestamp":
		return n.Value, nil
	case "!!int", "!!float", "!!bool", "!!null":
		v, err := plainValue(n.Value)
		if err != nil {
			return nil, nodeError(n, "%v", err)
		}
		ok := false
		switch x := v.(type) {
		case json.Number:
			ok = n.Tag == "!!float" || yamlInteger.MatchString(string(x))
		case bool:
			ok = n.Tag == "!!bool"
		case nil:
			ok = n.Tag == "!!null"
		}
		if !ok {
			return nil, nodeError(n, "%q is not a %s", n.Value, strings.TrimPrefix(n.Tag, "!!"))
		}
		return v, nil
	}
	return nil, nodeError(n, "the tag %s is not supported (a state file holds JSON's values)", n.Tag)
}

var (
	yamlInteger   = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	yamlDecimal   = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
	yamlOctalOld  = regexp.MustCompile(`^[-+]?0[0-9]+$`)
	yamlPrefixed  = regexp.MustCompile(`^[-+]?0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)$`)
	yamlFloatForm = regexp.MustCompile(`^([-+]?)(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// plainValue resolves a plain scalar as YAML 1.1 did in the former reader (go-yaml v2):
// its booleans and nulls, and its numbers, kept exactly as json.Number. The forms it read
// wrongly or not at all are refused: .inf and .nan (no JSON number), and an integer with
// a leading zero (YAML 1.1 reads 017 as octal 15, YAML 1.2 as 17).
func plainValue(s string) (any, error) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true, nil
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false, nil
	case "", "~", "null", "Null", "NULL":
		return nil, nil
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return nil, fmt.Errorf("%s is not a number JSON can hold", s)
	}
	if c := s[0]; c != '.' && c != '+' && c != '-' && (c < '0' || c > '9') {
		return s, nil
	}
	p := s
	if s[0] != '.' {
		p = strings.ReplaceAll(s, "_", "") // 1_000 is 1000, as YAML 1.1 has it
	}
	switch {
	case yamlDecimal.MatchString(p):
		return json.Number(strings.TrimPrefix(p, "+")), nil
	case yamlOctalOld.MatchString(p):
		return nil, fmt.Errorf("%s: an integer with a leading zero is octal in YAML 1.1 and decimal in YAML 1.2; write it without the zero, as 0o… for octal, or quoted for text", s)
	case yamlPrefixed.MatchString(p):
		n, ok := new(big.Int).SetString(p, 0)
		if !ok {
			return s, nil
		}
		return json.Number(n.String()), nil
	}
	m := yamlFloatForm.FindStringSubmatch(p)
	if m == nil {
		return s, nil // 1:30, 2026-11-29, +1 415…: text
	}
	sign, mant, exp := m[1], m[2], m[4]
	if sign == "+" {
		sign = ""
	}
	whole, frac, dot := strings.Cut(mant, ".")
	if whole = strings.TrimLeft(whole, "0"); whole == "" {
		whole = "0"
	}
	out := sign + whole
	if dot && frac != "" {
		out += "." + frac
	}
	return json.Number(out + exp), nil
}

// writeYAML writes a generic JSON tree (as readYAML returns them) as YAML that readYAML
// reads back as the same tree: numbers as their text, a string quoted wherever YAML 1.1
// would read it as something else (yes, 1e3, null), keys in alphabetical order.
func writeYAML(tree any) ([]byte, error) {
	n, err := yamlNode(tree)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func yamlNode(v any) (*yaml.Node, error) {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: "null"}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(x)}, nil
	case json.Number:
		if !yamlInteger.MatchString(string(x)) {
			if got, err := plainValue(string(x)); err != nil || got != x {
				return nil, fmt.Errorf("%q is not a JSON number", string(x))
			}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Value: string(x)}, nil
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: x}
		// A text of several lines goes as a literal block unless it holds a tab or a
		// carriage return, which the block could not give back as they are.
		multiLineUnsafe := strings.Contains(x, "\n") && strings.ContainsAny(x, "\t\r")
		if got, err := plainValue(x); err != nil || got != x || multiLineUnsafe {
			n.Style = yaml.DoubleQuotedStyle
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, item := range x {
			c, err := yamlNode(item)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c, err := yamlNode(x[k])
			if err != nil {
				return nil, err
			}
			key := &yaml.Node{Kind: yaml.ScalarNode, Value: k}
			if k == "<<" {
				key.Style = yaml.DoubleQuotedStyle // not a merge
			}
			n.Content = append(n.Content, key, c)
		}
		return n, nil
	}
	return nil, fmt.Errorf("a %T is not a JSON value", v)
}
