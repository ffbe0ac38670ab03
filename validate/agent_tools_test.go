package validate

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// Minimal valid tools of each type.
var toolExamples = map[string]string{
	data.ToolEndCall:                `{"name":"end_call","type":"end_call","description":"End the call when the caller says goodbye."}`,
	data.ToolTransferCall:           `{"name":"transfer","type":"transfer_call","phone_directory":[{"name":"Billing","phone_number":"+14155550100","description":"Invoices and refunds","transfer_type":"warm"}]}`,
	data.ToolPressIVR:               `{"name":"press_digit","type":"press_ivr"}`,
	data.ToolSendSMS:                `{"name":"sms","type":"send_sms","content_type":"static","content":"Your booking is confirmed."}`,
	data.ToolExtractDynamicVariable: `{"name":"extract","type":"extract_dynamic_variable","variables":[{"type":"string","name":"customer_name","description":"The caller's name"}]}`,
	data.ToolCustomFunction:         `{"name":"lookup_order","type":"custom_function","http_method":"POST","api_endpoint":"https://api.example.com/orders","timeout":5000}`,
}

// tool is a body holding one tool: the example of typ with fields added or overriding
// (replaced, not repeated: a name given twice is refused).
func tool(typ, fields string) string {
	return `{"llm_config":{"tools":[` + overlay(toolExamples[typ], fields) + `]}}`
}

// overlay returns the JSON object obj with fields (members, without braces) added or
// replacing its own.
func overlay(obj, fields string) string {
	if fields == "" {
		return obj
	}
	var base, over map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &base); err != nil {
		panic(err)
	}
	if err := json.Unmarshal([]byte("{"+fields+"}"), &over); err != nil {
		panic(err)
	}
	maps.Copy(base, over)
	b, err := json.Marshal(base)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestToolObject(t *testing.T) {
	for typ := range toolExamples {
		runRules(t, stored, []ruleCase{{"example " + typ, tool(typ, ""), ""}})
	}
	const p = "llm_config.tools.0."
	e := data.ToolEndCall
	runRules(t, stored, []ruleCase{
		{"name missing", `{"llm_config":{"tools":[{"type":"end_call"}]}}`, p + "name"},
		{"name starts with a digit", tool(e, `"name":"1end"`), p + "name"},
		{"name with a space", tool(e, `"name":"end call"`), p + "name"},
		{"name starts with -", tool(e, `"name":"-end_1"`), ""},
		{"name starts with _", tool(e, `"name":"_End9"`), ""},
		{"name 255", tool(e, `"name":"`+str(255)+`"`), ""},
		{"name 256", tool(e, `"name":"`+str(256)+`"`), p + "name"},
		{"type missing", `{"llm_config":{"tools":[{"name":"x"}]}}`, p + "type"},
		{"type unknown", tool(e, `"type":"hang_up"`), p + "type"},
		{"description null", tool(e, `"description":null`), ""},
		{"description 1024", tool(e, `"description":"`+str(1024)+`"`), ""},
		{"description 1025", tool(e, `"description":"`+str(1025)+`"`), p + "description"},
		{"announcement_type static", tool(e, `"announcement_type":"static"`), ""},
		{"announcement_type prompt", tool(e, `"announcement_type":"prompt"`), ""},
		{"announcement_type null", tool(e, `"announcement_type":null`), ""},
		{"announcement_type unknown", tool(e, `"announcement_type":"dynamic"`), p + "announcement_type"},
		{"announcement_message max", tool(e, `"announcement_message":"`+str(MaxText)+`"`), ""},
		{"announcement_message too long", tool(e, `"announcement_message":"`+str(MaxText+1)+`"`), p + "announcement_message"},
		{"announcement_prompt too long", tool(e, `"announcement_prompt":"`+str(MaxText+1)+`"`), p + "announcement_prompt"},
		{"transfer_declined_message too long", tool(e, `"transfer_declined_message":"`+str(MaxText+1)+`"`), p + "transfer_declined_message"},
		{"hold_audio 50", tool(e, `"hold_audio":"`+str(50)+`"`), ""},
		{"hold_audio 51", tool(e, `"hold_audio":"`+str(51)+`"`), p + "hold_audio"},
		{"custom_sip_headers", tool(e, `"custom_sip_headers":{"X-Customer-Id":"42"}`), ""},
		{"custom_sip_headers null", tool(e, `"custom_sip_headers":null`), p + "custom_sip_headers"},
		{"custom_sip_headers bad name", tool(e, `"custom_sip_headers":{"X Customer":"42"}`), p + "custom_sip_headers.X Customer"},
		{"custom_sip_headers value not a string", tool(e, `"custom_sip_headers":{"X-A":42}`), p + "custom_sip_headers.X-A"},
		{"custom_sip_headers value too long", tool(e, `"custom_sip_headers":{"X-A":"`+str(MaxText+1)+`"}`), p + "custom_sip_headers.X-A"},
		{"voicemail_detection true", tool(e, `"voicemail_detection":true`), ""},
		{"voicemail_detection null", tool(e, `"voicemail_detection":null`), ""},
		{"voicemail_detection string", tool(e, `"voicemail_detection":"yes"`), p + "voicemail_detection"},
		{"voicemail action prompt", tool(e, `"voicemail_response_action_type":"prompt"`), ""},
		{"voicemail action hangup", tool(e, `"voicemail_response_action_type":"hangup"`), ""},
		{"voicemail action message", tool(e, `"voicemail_response_action_type":"message"`), ""},
		{"voicemail action unknown", tool(e, `"voicemail_response_action_type":"beep"`), p + "voicemail_response_action_type"},
		{"voicemail_response_text too long", tool(e, `"voicemail_response_text":"`+str(MaxText+1)+`"`), p + "voicemail_response_text"},
		{"pause delay min", tool(e, `"pause_detection_delay_ms":1000`), ""},
		{"pause delay max", tool(e, `"pause_detection_delay_ms":6000`), ""},
		{"pause delay null", tool(e, `"pause_detection_delay_ms":null`), ""},
		{"pause delay below", tool(e, `"pause_detection_delay_ms":999`), p + "pause_detection_delay_ms"},
		{"pause delay above", tool(e, `"pause_detection_delay_ms":6001`), p + "pause_detection_delay_ms"},
		{"http_method GET", tool(e, `"http_method":"GET"`), ""},
		{"http_method PUT", tool(e, `"http_method":"PUT"`), ""},
		{"http_method PATCH", tool(e, `"http_method":"PATCH"`), ""},
		{"http_method DELETE", tool(e, `"http_method":"DELETE"`), ""},
		{"http_method lower case", tool(e, `"http_method":"get"`), p + "http_method"},
		{"api_endpoint not a URL", tool(e, `"api_endpoint":"api.example.com/x"`), p + "api_endpoint"},
		{"timeout 0", tool(e, `"timeout":0`), ""},
		{"timeout null", tool(e, `"timeout":null`), ""},
		{"timeout negative", tool(e, `"timeout":-1`), p + "timeout"},
		{"custom_function arrays", tool(e, `"custom_function_headers":["Authorization: Bearer x"],"custom_function_query":["q=1"],"custom_function_variables":["order_id"],"speak_during_execution_options":["One moment."]`), ""},
		{"custom_function_headers null item", tool(e, `"custom_function_headers":[null]`), p + "custom_function_headers.0"},
		{"custom_function_query too long item", tool(e, `"custom_function_query":["a","`+str(MaxText+1)+`"]`), p + "custom_function_query.1"},
		{"custom_function_variables too long item", tool(e, `"custom_function_variables":["`+str(MaxIdentifier+1)+`"]`), p + "custom_function_variables.0"},
		{"custom_function_parameters", tool(e, `"custom_function_parameters":"{\"type\":\"object\"}"`), ""},
		{"custom_function_parameters too long", tool(e, `"custom_function_parameters":"`+str(MaxPrompt+1)+`"`), p + "custom_function_parameters"},
		{"speak flags", tool(e, `"speak_during_execution":true,"speak_after_execution":null`), ""},
		{"speak_during_execution_options null", tool(e, `"speak_during_execution_options":null`), p + "speak_during_execution_options"},
		{"unknown tool field", tool(e, `"parameters":{}`), p + "parameters"},
	})
}

func TestToolRequiredWhenType(t *testing.T) {
	const p = "llm_config.tools.0."
	runRules(t, stored, []ruleCase{
		{"transfer_call without phone_directory", `{"llm_config":{"tools":[{"name":"t","type":"transfer_call"}]}}`, p + "phone_directory"},
		{"transfer_call empty phone_directory", tool(data.ToolTransferCall, `"phone_directory":[]`), p + "phone_directory"},
		{"phone_directory on another type", tool(data.ToolEndCall, `"phone_directory":[{"name":"a","phone_number":"+1","description":"d","transfer_type":"cold"}]`), ""},
		{"send_sms without content_type", `{"llm_config":{"tools":[{"name":"s","type":"send_sms","content":"hi"}]}}`, p + "content_type"},
		{"send_sms without content", `{"llm_config":{"tools":[{"name":"s","type":"send_sms","content_type":"prompt"}]}}`, p + "content"},
		{"send_sms content_type prompt", tool(data.ToolSendSMS, `"content_type":"prompt"`), ""},
		{"send_sms content_type unknown", tool(data.ToolSendSMS, `"content_type":"template"`), p + "content_type"},
		{"send_sms content too long", tool(data.ToolSendSMS, `"content":"`+str(MaxText+1)+`"`), p + "content"},
		{"content on another type", tool(data.ToolEndCall, `"content":"x"`), ""},
		{"extract without variables", `{"llm_config":{"tools":[{"name":"x","type":"extract_dynamic_variable"}]}}`, p + "variables"},
		{"extract empty variables", tool(data.ToolExtractDynamicVariable, `"variables":[]`), p + "variables"},
	})
}

func TestPhoneDirectoryItem(t *testing.T) {
	// The spec's own example path: the third tool's first directory entry.
	body := func(entry string) string {
		return `{"llm_config":{"tools":[` + toolExamples[data.ToolEndCall] + `,` + toolExamples[data.ToolPressIVR] +
			`,{"name":"transfer","type":"transfer_call","phone_directory":[` + entry + `]}]}}`
	}
	const p = "llm_config.tools.2.phone_directory.0."
	full := func(override string) string {
		return overlay(`{"name":"Sales","phone_number":"+14155550101","description":"New customers","transfer_type":"cold"}`, strings.TrimPrefix(override, ","))
	}
	runRules(t, stored, []ruleCase{
		{"cold", body(full("")), ""},
		{"warm", body(full(`,"transfer_type":"warm"`)), ""},
		{"transfer_type unknown", body(full(`,"transfer_type":"hot"`)), p + "transfer_type"},
		{"name missing", body(`{"phone_number":"+1","description":"d","transfer_type":"warm"}`), p + "name"},
		{"phone_number missing", body(`{"name":"n","description":"d","transfer_type":"warm"}`), p + "phone_number"},
		{"description missing", body(`{"name":"n","phone_number":"+1","transfer_type":"warm"}`), p + "description"},
		{"transfer_type missing", body(`{"name":"n","phone_number":"+1","description":"d"}`), p + "transfer_type"},
		{"name null", body(full(`,"name":null`)), p + "name"},
		{"item null", body(`null`), "llm_config.tools.2.phone_directory.0"},
		{"unknown field", body(full(`,"extension":"12"`)), p + "extension"},
		{"description too long", body(full(`,"description":"` + str(MaxText+1) + `"`)), p + "description"},
	})
	t.Run("all four missing at once", func(t *testing.T) {
		_, faults := apply(t, stored(), false, body(`{}`))
		for _, f := range []string{"name", "phone_number", "description", "transfer_type"} {
			if faults[p+f] == nil {
				t.Errorf("no fault on %s", p+f)
			}
		}
	})
}

func TestToolVariableItem(t *testing.T) {
	body := func(vars string) string {
		return `{"llm_config":{"tools":[{"name":"x","type":"extract_dynamic_variable","variables":[` + vars + `]}]}}`
	}
	const p = "llm_config.tools.0.variables."
	runRules(t, stored, []ruleCase{
		{"string", body(`{"type":"string","name":"city","description":"d"}`), ""},
		{"number", body(`{"type":"number","name":"age","description":"d"}`), ""},
		{"boolean", body(`{"type":"boolean","name":"is_member","description":"d"}`), ""},
		{"enum with choices", body(`{"type":"enum","name":"plan","description":"d","choices":["basic","pro"]}`), ""},
		{"type unknown", body(`{"type":"date","name":"day","description":"d"}`), p + "0.type"},
		{"type missing", body(`{"name":"day","description":"d"}`), p + "0.type"},
		{"name missing", body(`{"type":"string","description":"d"}`), p + "0.name"},
		{"name bad form", body(`{"type":"string","name":"first name","description":"d"}`), p + "0.name"},
		{"name too long", body(`{"type":"string","name":"` + str(MaxIdentifier+1) + `","description":"d"}`), p + "0.name"},
		{"description missing", body(`{"type":"string","name":"n"}`), p + "0.description"},
		{"enum without choices", body(`{"type":"enum","name":"plan","description":"d"}`), p + "0.choices"},
		{"choices on a string", body(`{"type":"string","name":"n","description":"d","choices":["a"]}`), p + "0.choices"},
		{"choices empty on a string", body(`{"type":"string","name":"n","description":"d","choices":[]}`), ""},
		{"choice repeated", body(`{"type":"enum","name":"plan","description":"d","choices":["a","a"]}`), p + "0.choices.1"},
		{"choice blank", body(`{"type":"enum","name":"plan","description":"d","choices":[""]}`), p + "0.choices.0"},
		{"names unique", body(`{"type":"string","name":"n","description":"d"},{"type":"number","name":"n","description":"d"}`), p + "1.name"},
		{"item null", body(`null`), p + "0"},
	})
}
