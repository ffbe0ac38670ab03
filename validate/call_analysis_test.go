package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// onlyFault fails unless err is nil (want "") or names exactly the path want.
func onlyFault(t *testing.T, name string, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s: want no fault, got %v", name, err)
		}
		return
	}
	e, ok := err.(*data.Error)
	if !ok || len(e.Fields) != 1 || e.Fields[want] == nil {
		t.Errorf("%s: want exactly a fault on %s, got %v", name, want, err)
	}
}

var bookingFields = &data.AnalysisConfig{Fields: []data.AnalysisField{
	{Name: "outcome", Type: data.AnalysisEnum, Choices: []string{"booked", "declined"}, Required: true},
	{Name: "guests", Type: data.AnalysisNumber},
	{Name: "vip", Type: data.AnalysisBoolean},
	{Name: "day", Type: data.AnalysisDate},
	{Name: "note", Type: data.AnalysisString},
}}

func TestCallAnalysis(t *testing.T) {
	for _, c := range []struct {
		name, body, fault string
	}{
		{"every type", `{"outcome":"booked","guests":4,"vip":true,"day":"2026-03-02","note":"window seat"}`, ""},
		{"only the required field", `{"outcome":"declined"}`, ""},
		{"undeclared keys kept", `{"outcome":"booked","mood":"happy","score":[1,2]}`, ""},
		{"null optional fields", `{"outcome":"booked","guests":null,"vip":null,"day":null,"note":null}`, ""},
		{"required missing", `{"guests":2}`, "analysis.outcome"},
		{"required null", `{"outcome":null}`, "analysis.outcome"},
		{"enum outside its choices", `{"outcome":"maybe"}`, "analysis.outcome"},
		{"enum not a string", `{"outcome":1}`, "analysis.outcome"},
		{"enum in another case", `{"outcome":"Booked"}`, "analysis.outcome"},
		{"number as a string", `{"outcome":"booked","guests":"4"}`, "analysis.guests"},
		{"boolean as a string", `{"outcome":"booked","vip":"true"}`, "analysis.vip"},
		{"boolean as a number", `{"outcome":"booked","vip":1}`, "analysis.vip"},
		{"date with a time", `{"outcome":"booked","day":"2026-03-02T10:00:00Z"}`, "analysis.day"},
		{"date out of the calendar", `{"outcome":"booked","day":"2026-02-30"}`, "analysis.day"},
		{"date as a number", `{"outcome":"booked","day":20260302}`, "analysis.day"},
		{"string as an object", `{"outcome":"booked","note":{"a":1}}`, "analysis.note"},
		{"string at its maximum", `{"outcome":"booked","note":"` + str(MaxAnalysisText) + `"}`, ""},
		{"string past its maximum", `{"outcome":"booked","note":"` + str(MaxAnalysisText+1) + `"}`, "analysis.note"},
		{"call_successful a boolean", `{"outcome":"booked","call_successful":false}`, ""},
		{"call_successful a string", `{"outcome":"booked","call_successful":"yes"}`, "analysis.call_successful"},
		{"summary a string", `{"outcome":"booked","summary":"Booked a table."}`, ""},
		{"summary past its maximum", `{"outcome":"booked","summary":"` + str(MaxAnalysisText+1) + `"}`, "analysis.summary"},
		{"summary a number", `{"outcome":"booked","summary":3}`, "analysis.summary"},
	} {
		var analysis map[string]any
		if err := json.Unmarshal([]byte(c.body), &analysis); err != nil {
			t.Fatal(err)
		}
		var errs Errors
		CallAnalysis(&errs, analysis, bookingFields)
		onlyFault(t, c.name, errs.Err(), c.fault)
	}
	t.Run("every fault at once", func(t *testing.T) {
		var errs Errors
		CallAnalysis(&errs, map[string]any{"guests": "x", "vip": 0.0, "day": "x"}, bookingFields)
		if errs.Len() != 4 {
			t.Errorf("faults: %v", errs.Err())
		}
	})
	t.Run("no fields declared", func(t *testing.T) {
		var errs Errors
		CallAnalysis(&errs, map[string]any{"anything": 1.0}, &data.AnalysisConfig{})
		onlyFault(t, "undeclared only", errs.Err(), "")
	})
}

// usageBody decodes a call update's usage member strictly, as the server does.
func usageFaults(body string) error {
	var in data.CallUpdate
	err := strictjson.Decode([]byte(`{"usage":`+body+`}`), &in)
	return Combine(err, CallUpdate(in))
}

func TestCallUsage(t *testing.T) {
	llm := func(rest string) string { return `{"llm":[{"provider":"groq","model":"m"` + rest + `}]}` }
	audio := func(kind, seconds string) string {
		return `{"` + kind + `":[{"provider":"deepgram","model":"nova-3","seconds":` + seconds + `}]}`
	}
	lines := func(kind string, n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"provider":"p","model":"m"}`
		}
		return `{"` + kind + `":[` + strings.Join(items, ",") + `]}`
	}
	for _, c := range []struct {
		name, body, fault string
	}{
		{"every list", `{"llm":[{"provider":"groq","model":"m","input_tokens":1,"output_tokens":2}],"tts":[{"provider":"elevenlabs","model":"m","characters":3}],` +
			`"stt":[{"provider":"deepgram","model":"nova-3","seconds":1.5}],"telephony":[{"provider":"twilio","seconds":60}]}`, ""},
		{"empty", `{}`, ""},
		{"null", `null`, ""},
		{"analysis is read-only", `{"analysis":[]}`, "usage.analysis"},
		{"unknown list", `{"video":[]}`, "usage.video"},
		{"provider missing", `{"llm":[{"model":"m"}]}`, "usage.llm.0.provider"},
		{"model empty", `{"llm":[{"provider":"p","model":""}]}`, ""},
		{"model past its maximum", `{"llm":[{"provider":"p","model":"` + str(MaxIdentifier+1) + `"}]}`, "usage.llm.0.model"},
		{"tokens at the maximum", llm(fmt.Sprintf(`,"input_tokens":%d,"output_tokens":%d`, MaxUsageTokens, MaxUsageTokens)), ""},
		{"input tokens past the maximum", llm(fmt.Sprintf(`,"input_tokens":%d`, MaxUsageTokens+1)), "usage.llm.0.input_tokens"},
		{"output tokens negative", llm(`,"output_tokens":-1`), "usage.llm.0.output_tokens"},
		{"tokens fractional", llm(`,"input_tokens":1.5`), "usage.llm.0.input_tokens"},
		{"characters at the maximum", fmt.Sprintf(`{"tts":[{"provider":"p","characters":%d}]}`, MaxUsageCharacters), ""},
		{"characters past the maximum", fmt.Sprintf(`{"tts":[{"provider":"p","characters":%d}]}`, MaxUsageCharacters+1), "usage.tts.0.characters"},
		{"seconds 0", audio("stt", "0"), ""},
		{"seconds at the maximum", audio("telephony", fmt.Sprint(MaxUsageSeconds)), ""},
		{"seconds past the maximum", audio("telephony", fmt.Sprint(MaxUsageSeconds)+".001"), "usage.telephony.0.seconds"},
		{"seconds negative", audio("stt", "-0.001"), "usage.stt.0.seconds"},
		{"seconds to the millisecond", audio("stt", "12.345"), ""},
		{"seconds past the millisecond", audio("stt", "12.3456"), "usage.stt.0.seconds"},
		{"20 lines", lines("llm", MaxUsageLines), ""},
		{"21 lines", lines("tts", MaxUsageLines+1), "usage.tts"},
	} {
		onlyFault(t, c.name, usageFaults(c.body), c.fault)
	}
}

func priceFaults(body string) error {
	var in data.PriceTableSet
	err := strictjson.Decode([]byte(body), &in)
	return Combine(err, PriceTable(in))
}

func TestPriceTable(t *testing.T) {
	row := func(price string) string {
		return `{"currency":"USD","prices":[{"provider":"groq","model":"*","unit":"llm_input_1m_tokens","price":` + price + `}]}`
	}
	rows := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"provider":"p","model":"m%d","unit":"stt_minute","price":"1"}`, i)
		}
		return `{"currency":"EUR","prices":[` + strings.Join(items, ",") + `]}`
	}
	for _, c := range []struct {
		name, body, fault string
	}{
		{"a price", row(`"0.59"`), ""},
		{"no prices", `{"currency":"USD","prices":[]}`, ""},
		{"price 0", row(`"0"`), ""},
		{"price at the maximum", row(`"1000000"`), ""},
		{"price past the maximum", row(`"1000000.000001"`), "prices.0.price"},
		{"a negative price", row(`"-0.01"`), "prices.0.price"},
		{"seven decimals", row(`"0.0000001"`), "prices.0.price"},
		{"a JSON number", row(`0.59`), "prices.0.price"},
		{"price missing", `{"currency":"USD","prices":[{"provider":"groq","model":"*","unit":"stt_minute"}]}`, "prices.0.price"},
		{"price null", row(`null`), "prices.0.price"},
		{"unit unknown", `{"currency":"USD","prices":[{"provider":"groq","model":"*","unit":"per_token","price":"1"}]}`, "prices.0.unit"},
		{"model missing", `{"currency":"USD","prices":[{"provider":"groq","unit":"stt_minute","price":"1"}]}`, "prices.0.model"},
		{"provider blank", `{"currency":"USD","prices":[{"provider":" ","model":"m","unit":"stt_minute","price":"1"}]}`, "prices.0.provider"},
		{"a row given twice", `{"currency":"USD","prices":[{"provider":"p","model":"m","unit":"stt_minute","price":"1"},{"provider":"p","model":"m","unit":"stt_minute","price":"2"}]}`, "prices.1"},
		{"currency missing", `{"prices":[]}`, "currency"},
		{"currency lower case", `{"currency":"usd","prices":[]}`, "currency"},
		{"currency of four letters", `{"currency":"USDT","prices":[]}`, "currency"},
		{"500 rows", rows(MaxPrices), ""},
		{"501 rows", rows(MaxPrices + 1), "prices"},
	} {
		onlyFault(t, c.name, priceFaults(c.body), c.fault)
	}
}
