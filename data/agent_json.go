package data

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The agent's JSON written by hand, byte for byte what encoding/json gives for it.
//
// LLMConfig, Tool and ToolVariable need a MarshalJSON (arrays as [], never null), and
// encoding/json validates and compacts whatever a MarshalJSON returns, at every level it
// is nested in: a tool's bytes were scanned three times an encoding, and that scan was a
// third of a full-body PUT's CPU. Appending straight into one buffer scans nothing.
// TestAgentJSONMatchesReflection holds these functions to encoding/json's output.

// AppendJSON appends the JSON encoding of a (json.Marshal's bytes for it) to dst.
func (a *Agent) AppendJSON(dst []byte) ([]byte, error) {
	dst = appendKey(dst, '{', "id")
	dst = appendString(dst, a.ID)
	dst = appendKey(dst, ',', "workspace_id")
	dst = appendString(dst, a.WorkspaceID)
	dst = appendKey(dst, ',', "name")
	dst = appendString(dst, a.Name)
	dst = appendKey(dst, ',', "status")
	dst = appendString(dst, a.Status)
	dst = appendKey(dst, ',', "published_version")
	dst = appendIntPtr(dst, a.PublishedVersion)
	dst, err := a.AgentConfig.appendMembers(dst)
	if err != nil {
		return nil, err
	}
	if dst, err = appendMarshal(appendKey(dst, ',', "privacy"), a.Privacy); err != nil {
		return nil, err
	}
	dst = appendIntPtr(appendKey(dst, ',', "max_concurrent_calls"), a.MaxConcurrentCalls)
	if dst = appendKey(dst, ',', "used_variables"); a.UsedVariables == nil {
		dst = append(dst, "null"...) // as encoding/json writes it; responses always set it
	} else {
		dst = appendStrings(dst, a.UsedVariables)
	}
	dst = appendKey(dst, ',', "created_at")
	dst = a.CreatedAt.appendJSON(dst)
	dst = appendKey(dst, ',', "updated_at")
	dst = a.UpdatedAt.appendJSON(dst)
	dst = appendKey(dst, ',', "published_at")
	if a.PublishedAt == nil {
		dst = append(dst, "null"...)
	} else {
		dst = a.PublishedAt.appendJSON(dst)
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the JSON encoding of a (json.Marshal's bytes for it) to dst.
func (a *StoredAgent) AppendJSON(dst []byte) ([]byte, error) {
	dst, err := a.Agent.AppendJSON(dst)
	if err != nil {
		return nil, err
	}
	dst = appendKey(dst[:len(dst)-1], ',', "last_version")
	dst = strconv.AppendInt(dst, int64(a.LastVersion), 10)
	return append(dst, '}'), nil
}

// appendMembers appends the seven groups as members of an object already opened.
func (c *AgentConfig) appendMembers(dst []byte) ([]byte, error) {
	var err error
	for _, g := range [...]struct {
		name string
		v    any
	}{{"call_config", c.CallConfig}, {"knowledge_base_config", c.KnowledgeBaseConfig}} {
		if dst, err = appendMarshal(appendKey(dst, ',', g.name), g.v); err != nil {
			return nil, err
		}
	}
	if dst, err = c.LLMConfig.appendJSON(appendKey(dst, ',', "llm_config")); err != nil {
		return nil, err
	}
	for _, g := range [...]struct {
		name string
		v    any
	}{{"prompt_config", c.PromptConfig}, {"stt_config", c.STTConfig}, {"tts_config", c.TTSConfig}} {
		if dst, err = appendMarshal(appendKey(dst, ',', g.name), g.v); err != nil {
			return nil, err
		}
	}
	return c.AnalysisConfig.appendJSON(appendKey(dst, ',', "analysis_config")), nil
}

// appendMarshal appends json.Marshal(v), for the small groups without a MarshalJSON.
func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

func (c *LLMConfig) appendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = appendKey(dst, '{', "provider")
	dst = appendString(dst, c.Provider)
	dst = appendOptString(dst, "model", c.Model)
	if c.Temperature != nil {
		if dst, err = appendFloat(appendKey(dst, ',', "temperature"), *c.Temperature); err != nil {
			return nil, err
		}
	}
	dst = appendOptString(dst, "deployment", c.Deployment)
	dst = appendOptString(dst, "endpoint", c.Endpoint)
	dst = appendOptString(dst, "api_version", c.APIVersion)
	dst = appendOptString(dst, "base_url", c.BaseURL)
	dst = appendKey(dst, ',', "api_key")
	dst = appendStringPtr(dst, c.APIKey)
	dst = appendOptString(dst, "region", c.Region)
	if c.MaxTokens != nil {
		dst = appendIntPtr(appendKey(dst, ',', "max_tokens"), c.MaxTokens)
	}
	dst = appendStrings(appendKey(dst, ',', "knowledge_base_ids"), c.KnowledgeBaseIDs)
	dst = append(appendKey(dst, ',', "tools"), '[')
	for i, t := range c.Tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		if t == nil {
			dst = append(dst, "null"...)
		} else if dst, err = t.appendJSON(dst); err != nil {
			return nil, err
		}
	}
	return append(dst, "]}"...), nil
}

func (t *Tool) appendJSON(dst []byte) ([]byte, error) {
	dst = appendKey(dst, '{', "name")
	dst = appendString(dst, t.Name)
	dst = appendString(appendKey(dst, ',', "type"), t.Type)
	for _, f := range [...]struct {
		name string
		v    *string
	}{
		{"description", t.Description}, {"announcement_type", t.AnnouncementType},
		{"announcement_message", t.AnnouncementMessage}, {"announcement_prompt", t.AnnouncementPrompt},
		{"transfer_declined_message", t.TransferDeclinedMessage}, {"hold_audio", t.HoldAudio},
	} {
		dst = appendStringPtr(appendKey(dst, ',', f.name), f.v)
	}
	dst = appendStringMap(appendKey(dst, ',', "custom_sip_headers"), t.CustomSIPHeaders)
	dst = appendBoolPtr(appendKey(dst, ',', "voicemail_detection"), t.VoicemailDetection)
	dst = appendStringPtr(appendKey(dst, ',', "voicemail_response_action_type"), t.VoicemailResponseActionType)
	dst = appendStringPtr(appendKey(dst, ',', "voicemail_response_text"), t.VoicemailResponseText)
	dst = append(appendKey(dst, ',', "phone_directory"), '[')
	for i, e := range t.PhoneDirectory {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(appendKey(dst, '{', "name"), e.Name)
		dst = appendString(appendKey(dst, ',', "phone_number"), e.PhoneNumber)
		dst = appendString(appendKey(dst, ',', "description"), e.Description)
		dst = append(appendString(appendKey(dst, ',', "transfer_type"), e.TransferType), '}')
	}
	dst = append(dst, ']')
	dst = appendIntPtr(appendKey(dst, ',', "pause_detection_delay_ms"), t.PauseDetectionDelayMS)
	dst = appendOptString(dst, "content_type", t.ContentType)
	dst = appendOptString(dst, "content", t.Content)
	dst = appendOptString(dst, "http_method", t.HTTPMethod)
	dst = appendOptString(dst, "api_endpoint", t.APIEndpoint)
	dst = appendIntPtr(appendKey(dst, ',', "timeout"), t.Timeout)
	dst = appendStrings(appendKey(dst, ',', "custom_function_headers"), t.CustomFunctionHeaders)
	dst = appendStrings(appendKey(dst, ',', "custom_function_query"), t.CustomFunctionQuery)
	dst = appendStringPtr(appendKey(dst, ',', "custom_function_parameters"), t.CustomFunctionParameters)
	dst = appendStrings(appendKey(dst, ',', "custom_function_variables"), t.CustomFunctionVariables)
	dst = appendBoolPtr(appendKey(dst, ',', "speak_during_execution"), t.SpeakDuringExecution)
	dst = appendStrings(appendKey(dst, ',', "speak_during_execution_options"), t.SpeakDuringExecutionOptions)
	dst = appendBoolPtr(appendKey(dst, ',', "speak_after_execution"), t.SpeakAfterExecution)
	dst = append(appendKey(dst, ',', "variables"), '[')
	for i := range t.Variables {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = t.Variables[i].appendJSON(dst)
	}
	return append(dst, "]}"...), nil
}

func (v *ToolVariable) appendJSON(dst []byte) []byte {
	dst = appendString(appendKey(dst, '{', "type"), v.Type)
	dst = appendString(appendKey(dst, ',', "name"), v.Name)
	dst = appendString(appendKey(dst, ',', "description"), v.Description)
	return append(appendStrings(appendKey(dst, ',', "choices"), v.Choices), '}')
}

func (t Time) appendJSON(dst []byte) []byte {
	if t.IsZero() {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	return append(t.UTC().AppendFormat(dst, TimeLayout), '"')
}

// appendKey appends sep (',' or '{') and "name": (names here need no escaping).
func appendKey(dst []byte, sep byte, name string) []byte {
	dst = append(dst, sep, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendOptString is a string member tagged omitempty.
func appendOptString(dst []byte, name, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(appendKey(dst, ',', name), s)
}

func appendStringPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s)
}

func appendIntPtr(dst []byte, n *int) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(*n), 10)
}

func appendBoolPtr(dst []byte, b *bool) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendBool(dst, *b)
}

// appendStrings appends a string array; nil is [] as well.
func appendStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// appendStringMap appends an object with sorted keys, as encoding/json sorts them; nil is
// {} as well.
func appendStringMap(dst []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendString(dst, k), ':')
		dst = appendString(dst, m[k])
	}
	return append(dst, '}')
}

// appendFloat is encoding/json's float64 encoding: like %g, but with ES6's exponent
// cutoffs and no padding of the exponent.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: unsupported value: %v", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9
		if b := dst[start:]; len(b) >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			dst[len(dst)-2] = dst[len(dst)-1]
			dst = dst[:len(dst)-1]
		}
	}
	return dst, nil
}

const hexDigits = "0123456789abcdef"

// appendString is encoding/json's string encoding with HTML escaping (its default):
// control characters, ", \, <, > and & escaped, invalid UTF-8 as U+FFFD, U+2028 and
// U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
