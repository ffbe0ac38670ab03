package conversation

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// eachText calls fn with every text of cfg that variables are substituted in (conventions
// §23): prompt_config.prompt and welcome_message; each tool's description and messages
// (announcement_message, announcement_prompt, transfer_declined_message,
// voicemail_response_text, send_sms content, speak_during_execution_options); and a
// custom_function's api_endpoint, headers, query and parameters. jsonText marks
// custom_function_parameters, a JSON document. fn may replace the text through s.
func eachText(cfg *data.AgentConfig, fn func(s *string, jsonText bool)) {
	fn(&cfg.PromptConfig.Prompt, false)
	fn(&cfg.PromptConfig.WelcomeMessage, false)
	for _, t := range cfg.LLMConfig.Tools {
		if t == nil {
			continue
		}
		for _, p := range []*string{t.Description, t.AnnouncementMessage, t.AnnouncementPrompt, t.TransferDeclinedMessage, t.VoicemailResponseText} {
			if p != nil {
				fn(p, false)
			}
		}
		fn(&t.Content, false)
		for i := range t.SpeakDuringExecutionOptions {
			fn(&t.SpeakDuringExecutionOptions[i], false)
		}
		fn(&t.APIEndpoint, false)
		for i := range t.CustomFunctionHeaders {
			fn(&t.CustomFunctionHeaders[i], false)
		}
		for i := range t.CustomFunctionQuery {
			fn(&t.CustomFunctionQuery[i], false)
		}
		if t.CustomFunctionParameters != nil {
			fn(t.CustomFunctionParameters, true)
		}
	}
}

// ConfigVariables returns the names of the variables cfg uses anywhere, sorted, each once.
func ConfigVariables(cfg *data.AgentConfig) []string {
	var out []string
	c := *cfg // eachText only reads here; a shallow copy keeps cfg's pointers
	eachText(&c, func(s *string, _ bool) {
		for _, name := range VariablesIn(*s) {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	})
	slices.Sort(out)
	return out
}

// MissingVariables returns the variables cfg uses that vars does not give a value of an
// allowed type, sorted: what a call start refuses as missing_variables.
func MissingVariables(cfg *data.AgentConfig, vars map[string]any) []string {
	var out []string
	for _, name := range ConfigVariables(cfg) {
		if v, ok := vars[name]; !ok || !ValueAllowed(v) {
			out = append(out, name)
		}
	}
	return out
}

// SubstituteConfig returns a copy of cfg with every variable it uses substituted (the
// places of eachText) and the names it lacked, sorted; cfg is not changed. In
// custom_function_parameters, a JSON document, values are substituted inside its strings
// and written back as JSON, so a value with a quote cannot break the document; a text that
// is not JSON is substituted as plain text.
func SubstituteConfig(cfg data.AgentConfig, vars map[string]any) (data.AgentConfig, []string) {
	out := cloneConfig(cfg)
	var missing []string
	eachText(&out, func(s *string, jsonText bool) {
		var lacked []string
		if jsonText {
			*s, lacked = substituteJSON(*s, vars)
		} else {
			*s, lacked = Substitute(*s, vars)
		}
		for _, name := range lacked {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	})
	slices.Sort(missing)
	return out, missing
}

// substituteJSON substitutes inside every string (keys included) of a JSON document.
// Members whose keys become one (`{{a}}` and `{{b}}` with a and b equal) keep the later
// one's value, in the document's order, as a JSON decoder keeps the later of two equal
// keys: decoded into a map first, which of them stayed was chance.
func substituteJSON(text string, vars map[string]any) (string, []string) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	// Numbers keep their text (json.Number): as float64 12345678901234567890 would come
	// back 12345678901234567000 and 1.50 as 1.5, changing a schema's bounds.
	if !json.Valid([]byte(text)) {
		return Substitute(text, vars)
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var missing []string
	sub := func(s string) string {
		out, lacked := Substitute(s, vars)
		missing = append(missing, lacked...)
		return out
	}
	doc, err := decodeSubstituted(d, sub)
	if err != nil { // cannot happen: the document is valid
		return Substitute(text, vars)
	}
	b, err := json.Marshal(doc)
	if err != nil { // cannot happen: the document was just decoded
		return Substitute(text, vars)
	}
	slices.Sort(missing)
	return string(b), slices.Compact(missing)
}

// decodeSubstituted decodes the next value of d with sub applied to every string, keys
// included, an object's members taken in the document's order.
func decodeSubstituted(d *json.Decoder, sub func(string) string) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case string:
		return sub(v), nil
	case json.Delim:
		if v == '[' {
			list := []any{}
			for d.More() {
				item, err := decodeSubstituted(d, sub)
				if err != nil {
					return nil, err
				}
				list = append(list, item)
			}
			_, err := d.Token()
			return list, err
		}
		object := map[string]any{}
		for d.More() {
			key, err := d.Token()
			if err != nil {
				return nil, err
			}
			item, err := decodeSubstituted(d, sub)
			if err != nil {
				return nil, err
			}
			object[asJSONWrites(sub(key.(string)))] = item
		}
		_, err := d.Token()
		return object, err
	}
	return t, nil // json.Number, bool or nil
}

// asJSONWrites is s as encoding/json writes it, each byte of invalid UTF-8 as U+FFFD: keys
// that a value's broken bytes would make differ only until written then merge as the
// document's later member wins, as keys equal from the start do, not in byte order.
func asJSONWrites(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // a range gives U+FFFD for each byte of invalid UTF-8
		b.WriteRune(r)
	}
	return b.String()
}

// cloneConfig copies what substitution may change: the prompt group by value, and each
// tool with its own copies of the substituted strings and lists.
func cloneConfig(cfg data.AgentConfig) data.AgentConfig {
	tools := make([]*data.Tool, len(cfg.LLMConfig.Tools))
	for i, t := range cfg.LLMConfig.Tools {
		if t == nil {
			continue
		}
		c := *t
		for _, p := range []**string{&c.Description, &c.AnnouncementMessage, &c.AnnouncementPrompt, &c.TransferDeclinedMessage, &c.VoicemailResponseText, &c.CustomFunctionParameters} {
			if *p != nil {
				v := **p
				*p = &v
			}
		}
		c.SpeakDuringExecutionOptions = slices.Clone(t.SpeakDuringExecutionOptions)
		c.CustomFunctionHeaders = slices.Clone(t.CustomFunctionHeaders)
		c.CustomFunctionQuery = slices.Clone(t.CustomFunctionQuery)
		tools[i] = &c
	}
	cfg.LLMConfig.Tools = tools
	return cfg
}
