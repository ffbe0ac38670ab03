package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// UntestedField is a configuration field no agent test can observe, and why.
type UntestedField struct {
	Path string // dot path in the agent's JSON
	Why  string
}

// UntestedFields are the configuration fields left out of a draft's revision (the publish
// gate's key, conventions §22): a test is a text conversation through the conversation
// engine, so what only a phone line reads cannot change its outcome. Every other field
// counts, including any added later: a field is observable until shown otherwise here.
var UntestedFields = []UntestedField{
	{"call_config", "ring and maximum call duration bound a phone call; a test is bounded by its max_turns"},
	{"stt_config", "speech recognition: a test's caller sends text"},
	{"tts_config", "speech synthesis: a test reads the agent's text"},
	{"prompt_config.ai_speak_after_silence", "silence on the line; a test's turns have none"},
	{"prompt_config.ai_speak_wait_time", "silence on the line; a test's turns have none"},
	{"analysis_config", "post-call analysis runs on a call after it ends; no test criterion reads it"},
}

// TestedContent is the canonical encoding of what of c an agent test can observe: c as
// responses write it (absent defaults filled in, arrays never null), without
// UntestedFields, object members sorted. Two configurations a test cannot tell apart give
// the same bytes. It holds c's api_key as given: callers key a hash of it, never show it.
func TestedContent(c AgentConfig) ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding the configuration: %w", err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a number keeps the text it was written with
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding the configuration: %w", err)
	}
	for _, f := range UntestedFields {
		group, member, nested := strings.Cut(f.Path, ".")
		if !nested {
			delete(doc, group)
		} else if g, ok := doc[group].(map[string]any); ok {
			delete(g, member)
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil { // maps are written with their keys sorted
		return nil, fmt.Errorf("encoding the tested configuration: %w", err)
	}
	return out.Bytes(), nil
}
