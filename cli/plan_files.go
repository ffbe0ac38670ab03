package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// A state file (YAML or JSON) declares agents, knowledge bases, numbers and webhooks; a
// directory of them is read as one whole. docs/agents-as-code.md is the reference.
type stateFile struct {
	Agents         []map[string]any `json:"agents"`
	KnowledgeBases []kbSpec         `json:"knowledge_bases"`
	Numbers        []numberSpec     `json:"numbers"`
	Webhooks       []webhookSpec    `json:"webhooks"`
}

// kbSpec is a knowledge base and its sources; Files are paths relative to the file.
type kbSpec struct {
	Name  string           `json:"name"`
	Texts []data.TextInput `json:"texts"`
	URLs  []string         `json:"urls"`
	Files []string         `json:"files"`
	// loaded from Files: base name and bytes.
	uploads []data.FileUpload
	origin  string
}

// checkDuplicates refuses a source listed twice: sources are matched by content, so a
// second copy could never be told apart from the first.
func (kb *kbSpec) checkDuplicates(path string) error {
	seen := map[string]int{}
	check := func(list string, i int, key string) error {
		if first, dup := seen[list+"\x00"+key]; dup {
			return fmt.Errorf("%s.%s[%d]: the same source as %s[%d]", path, list, i, list, first)
		}
		seen[list+"\x00"+key] = i
		return nil
	}
	for i, t := range kb.Texts {
		if err := check("texts", i, textKey(t.Title, t.Content)); err != nil {
			return err
		}
	}
	for i, u := range kb.URLs {
		if err := check("urls", i, u); err != nil {
			return err
		}
	}
	for i, f := range kb.uploads {
		if err := check("files", i, fileKey(f.Filename, fileDigest(f.Content))); err != nil {
			return err
		}
	}
	return nil
}

// numberSpec is a phone number; its agents are named, not given by id.
type numberSpec struct {
	PhoneNumber   string  `json:"phone_number"`
	Nickname      string  `json:"nickname"`
	Provider      string  `json:"provider"`
	InboundAgent  *string `json:"inbound_agent"`
	OutboundAgent *string `json:"outbound_agent"`
	origin        string
}

// webhookSpec is a webhook, known by its URL.
type webhookSpec struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
	Enabled     *bool    `json:"enabled"`
	origin      string
}

// agentSpec is an agent as the files give it: the groups keep exactly the members written.
type agentSpec struct {
	Name string
	// KnowledgeBases names the agent's knowledge bases; nil when the file leaves them
	// unmanaged.
	KnowledgeBases []string
	Groups         map[string]map[string]any
	// Tests are the agent's tests; nil when the file leaves them unmanaged
	// (cli/plan_tests.go).
	Tests  []*testSpec
	origin string
}

// desired is everything the files declare, keyed by each kind's stable name.
type desired struct {
	agents   []*agentSpec
	kbs      []*kbSpec
	numbers  []*numberSpec
	webhooks []*webhookSpec
	// secrets are the values read from the environment, masked wherever shown.
	secrets []string
}

// groupTypes gives each agent group's Go type, to name the members a file may write.
var groupTypes = map[string]reflect.Type{
	"call_config":           reflect.TypeFor[data.CallConfig](),
	"knowledge_base_config": reflect.TypeFor[data.KnowledgeBaseConfig](),
	"llm_config":            reflect.TypeFor[data.LLMConfig](),
	"prompt_config":         reflect.TypeFor[data.PromptConfig](),
	"stt_config":            reflect.TypeFor[data.STTConfig](),
	"tts_config":            reflect.TypeFor[data.TTSConfig](),
	"analysis_config":       reflect.TypeFor[data.AnalysisConfig](),
}

// loadDesired reads a file, or every .yaml, .yml and .json file under a directory.
func loadDesired(path string) (*desired, error) {
	files, err := stateFiles(path)
	if err != nil {
		return nil, err
	}
	d := &desired{}
	for _, f := range files {
		if err := d.load(f); err != nil {
			return nil, err
		}
	}
	return d, d.checkUnique()
}

func stateFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s holds no .yaml, .yml or .json file", path)
	}
	slices.Sort(files)
	return files, err
}

// load reads one file: YAML (JSON is YAML too), secrets substituted, then decoded
// strictly so that an unknown member is named with its file and path.
func (d *desired) load(file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	// Either way every number keeps its text (readYAML).
	var tree any
	if strings.ToLower(filepath.Ext(file)) == ".json" {
		err = data.DecodeJSON(raw, &tree)
	} else {
		tree, err = readYAML(raw)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if tree == nil {
		return nil // an empty file
	}
	if _, ok := tree.(map[string]any); !ok {
		return fmt.Errorf("%s: the file must be a mapping with agents, knowledge_bases, numbers or webhooks", file)
	}
	tree, err = d.substitute(tree, "")
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	js, _ := json.Marshal(tree)
	var sf stateFile
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&sf); err != nil {
		return fmt.Errorf("%s: %s", file, jsonFault(err))
	}
	for i, a := range sf.Agents {
		spec, err := agentFromMap(a, fmt.Sprintf("agents[%d]", i))
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		spec.origin = fmt.Sprintf("%s (agents[%d])", file, i)
		d.agents = append(d.agents, spec)
	}
	for i := range sf.KnowledgeBases {
		kb := &sf.KnowledgeBases[i]
		if kb.Name == "" {
			return fmt.Errorf("%s: knowledge_bases[%d].name: a knowledge base needs a name", file, i)
		}
		for j, p := range kb.Files {
			full := p
			if !filepath.IsAbs(p) {
				full = filepath.Join(filepath.Dir(file), p)
			}
			b, err := os.ReadFile(full)
			if err != nil {
				return fmt.Errorf("%s: knowledge_bases[%d].files[%d]: %w", file, i, j, err)
			}
			kb.uploads = append(kb.uploads, data.FileUpload{Filename: filepath.Base(p), Content: b})
		}
		if err := kb.checkDuplicates(fmt.Sprintf("knowledge_bases[%q]", kb.Name)); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		kb.origin = fmt.Sprintf("%s (knowledge_bases[%d])", file, i)
		d.kbs = append(d.kbs, kb)
	}
	for i := range sf.Numbers {
		if sf.Numbers[i].PhoneNumber == "" {
			return fmt.Errorf("%s: numbers[%d].phone_number: a number needs its phone_number", file, i)
		}
		sf.Numbers[i].origin = fmt.Sprintf("%s (numbers[%d])", file, i)
		d.numbers = append(d.numbers, &sf.Numbers[i])
	}
	for i := range sf.Webhooks {
		if sf.Webhooks[i].URL == "" {
			return fmt.Errorf("%s: webhooks[%d].url: a webhook needs its url", file, i)
		}
		sf.Webhooks[i].origin = fmt.Sprintf("%s (webhooks[%d])", file, i)
		d.webhooks = append(d.webhooks, &sf.Webhooks[i])
	}
	return nil
}

// jsonFault words a strict decoding error without Go type names where it can.
func jsonFault(err error) string {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		return fmt.Sprintf("%s: must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + f
	}
	return msg
}

func asType[T error](err error, target *T) bool {
	t, ok := err.(T)
	if ok {
		*target = t
	}
	return ok
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	default:
		return "a number"
	}
}

// agentFromMap checks an agent's members: name, knowledge_bases, tests and the six groups,
// each group a mapping of the group's own members.
func agentFromMap(m map[string]any, path string) (*agentSpec, error) {
	spec := &agentSpec{Groups: map[string]map[string]any{}}
	name, ok := m["name"].(string)
	if !ok || name == "" {
		return nil, fmt.Errorf("%s.name: an agent needs a name (a string)", path)
	}
	spec.Name = name
	path = fmt.Sprintf("agents[%q]", name)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch {
		case k == "name":
		case k == "knowledge_bases":
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s.knowledge_bases: must be a list of knowledge base names", path)
			}
			spec.KnowledgeBases = []string{}
			for i, it := range list {
				s, ok := it.(string)
				if !ok || s == "" {
					return nil, fmt.Errorf("%s.knowledge_bases[%d]: must be a knowledge base name", path, i)
				}
				spec.KnowledgeBases = append(spec.KnowledgeBases, s)
			}
		case k == "tests":
			var err error
			if spec.Tests, err = testsFromList(v, path); err != nil {
				return nil, err
			}
		case groupTypes[k] != nil:
			g, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s.%s: must be a mapping", path, k)
			}
			if _, ok := g["knowledge_base_ids"]; ok {
				return nil, fmt.Errorf("%s.llm_config.knowledge_base_ids: name the knowledge bases in the agent's knowledge_bases instead of giving ids", path)
			}
			known := memberNames(groupTypes[k])
			for member := range g {
				if !known[member] {
					return nil, fmt.Errorf("%s.%s.%s: unknown field (known: %s)", path, k, member, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
				}
			}
			spec.Groups[k] = g
		default:
			return nil, fmt.Errorf("%s.%s: unknown field (known: name, knowledge_bases, tests, %s)", path, k, strings.Join(client.AgentGroups, ", "))
		}
	}
	return spec, nil
}

func memberNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name != "knowledge_base_ids" { // named by knowledge_bases
			out[name] = true
		}
	}
	return out
}

// envRef is the secret syntax of a state file: ${env:NAME} anywhere in a string. A
// reference written with more dollars is escaped: one dollar fewer, and no variable read
// ($${env:NAME} is the text ${env:NAME}), so pull can write any text the server holds
// (escapeEnvRefs).
var envRef = regexp.MustCompile(`(\$+)\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// escapeEnvRefs returns s written so that substitute reads it back as s.
func escapeEnvRefs(s string) string { return envRef.ReplaceAllString(s, "$$$0") }

// substitute replaces every ${env:NAME} in the tree's strings by the variable's value; an
// unset variable is an error naming the field. The values are remembered as secrets.
func (d *desired) substitute(v any, path string) (any, error) {
	switch t := v.(type) {
	case string:
		var missing string
		out := envRef.ReplaceAllStringFunc(t, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if len(m[1]) > 1 {
				return ref[1:] // escaped
			}
			name := m[2]
			val, ok := os.LookupEnv(name)
			if !ok && missing == "" {
				missing = name
			}
			if val != "" {
				d.secrets = append(d.secrets, val)
			}
			return val
		})
		if missing != "" {
			return nil, fmt.Errorf("%s: the environment variable %s is not set", strings.TrimPrefix(path, "."), missing)
		}
		return out, nil
	case map[string]any:
		for k, it := range t {
			s, err := d.substitute(it, path+"."+k)
			if err != nil {
				return nil, err
			}
			t[k] = s
		}
	case []any:
		for i, it := range t {
			s, err := d.substitute(it, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			t[i] = s
		}
	}
	return v, nil
}

// checkUnique refuses two declarations of one name, naming both: file and entry, as the
// two may be in one file.
func (d *desired) checkUnique() error {
	seen := map[string]string{}
	check := func(kind, key, origin string) error {
		k := kind + "\x00" + key
		if first, dup := seen[k]; dup {
			return fmt.Errorf("%s %q is declared twice: in %s and in %s", kind, key, first, origin)
		}
		seen[k] = origin
		return nil
	}
	for _, a := range d.agents {
		if err := check("agent", a.Name, a.origin); err != nil {
			return err
		}
	}
	for _, kb := range d.kbs {
		if err := check("knowledge base", kb.Name, kb.origin); err != nil {
			return err
		}
	}
	for _, n := range d.numbers {
		if err := check("number", n.PhoneNumber, n.origin); err != nil {
			return err
		}
	}
	for _, w := range d.webhooks {
		if err := check("webhook", w.URL, w.origin); err != nil {
			return err
		}
	}
	return nil
}

// fileDigest is the hex SHA-256 of a file's bytes, as the server records it.
func fileDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
