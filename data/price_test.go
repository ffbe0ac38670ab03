package data

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestMoneyParseAndFormat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Money
		out  string
	}{
		{"0", 0, "0"}, {"0.59", 590_000, "0.59"}, {"1", 1_000_000, "1"}, {"12.000001", 12_000_001, "12.000001"},
		{"-0.5", -500_000, "-0.5"}, {"0.000001", 1, "0.000001"}, {"1000000", 1_000_000_000_000, "1000000"},
		{"999999999999.999999", 999_999_999_999_999_999, "999999999999.999999"}, {"0.100", 100_000, "0.1"},
	} {
		got, err := ParseMoney(c.in)
		if err != nil || got != c.want || got.String() != c.out {
			t.Errorf("%q: %d (%q), %v; want %d (%q)", c.in, got, got.String(), err, c.want, c.out)
		}
	}
	for _, bad := range []string{"", ".5", "1.", "0.0000001", "1e3", "+1", "1,5", "0x10", " 1", "1234567890123"} {
		if _, err := ParseMoney(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	var m Money
	if err := json.Unmarshal([]byte(`0.59`), &m); err == nil {
		t.Error("a JSON number was taken for a decimal string")
	}
	if b, _ := json.Marshal(Money(14_000)); string(b) != `"0.014"` {
		t.Errorf("marshal: %s", b)
	}
}

// TestCostOfHandComputed holds CostOf to figures worked out by hand.
func TestCostOfHandComputed(t *testing.T) {
	table := &PriceTable{Currency: "USD", Prices: []Price{
		{Provider: "groq", Model: "llama-3.3-70b-versatile", Unit: UnitLLMInput, Price: 590_000},    // $0.59 per 1M
		{Provider: "groq", Model: "llama-3.3-70b-versatile", Unit: UnitLLMOutput, Price: 790_000},   // $0.79 per 1M
		{Provider: "groq", Model: AnyModel, Unit: UnitLLMInput, Price: 50_000},                      // $0.05 per 1M
		{Provider: "elevenlabs", Model: "eleven_flash_v2_5", Unit: UnitTTSChars, Price: 50_000_000}, // $50 per 1M
		{Provider: "deepgram", Model: "nova-3", Unit: UnitSTTMinute, Price: 4_300},                  // $0.0043 per minute
		{Provider: "twilio", Model: AnyModel, Unit: UnitPhoneMinute, Price: 14_000},                 // $0.014 per minute
	}}
	u := &CallUsage{
		LLM:       []LLMUsage{{Provider: "groq", Model: "llama-3.3-70b-versatile", InputTokens: 12_345, OutputTokens: 678}},
		TTS:       []TTSUsage{{Provider: "elevenlabs", Model: "eleven_flash_v2_5", Characters: 1_234}},
		STT:       []AudioUsage{{Provider: "deepgram", Model: "nova-3", Seconds: 62.5}},
		Telephony: []AudioUsage{{Provider: "twilio", Seconds: 65.25}},
		Analysis:  []LLMUsage{{Provider: "groq", Model: "llama-3.1-8b-instant", InputTokens: 3_000, OutputTokens: 120}},
	}
	c := CostOf(u, table)
	// 12,345 × 0.59 / 1M = 0.00728355 → 7,283.55 µ → 7,284 (half up)
	// 678 × 0.79 / 1M     = 0.00053562 →   535.62 µ →   536
	// 1,234 × 50 / 1M     = 0.0617     → 61,700 µ
	// 62.5 s = 62,500 ms × 0.0043 / 60,000 ms = 0.00447916… → 4,479.17 µ → 4,479
	// 65.25 s = 65,250 ms × 0.014 / 60,000 ms = 0.0152250   → 15,225 µ
	// analysis: 3,000 × 0.05 (groq's * price) / 1M = 0.00015 → 150 µ; its 120 output
	// tokens have no price (groq has no * output price): unpriced.
	want := []int64{7_284, 536, 61_700, 4_479, 15_225, 150}
	var amounts []int64
	for _, l := range c.Lines {
		amounts = append(amounts, l.AmountMicros)
	}
	if !reflect.DeepEqual(amounts, want) {
		t.Fatalf("line amounts = %v, want %v (%+v)", amounts, want, c.Lines)
	}
	if c.TotalMicros != 89_374 || c.Total.String() != "0.089374" || c.Currency != "USD" {
		t.Errorf("total = %d (%s %s), want 89374 (0.089374 USD)", c.TotalMicros, c.Total, c.Currency)
	}
	if len(c.Unpriced) != 1 || c.Unpriced[0].Unit != UnitLLMOutput || c.Unpriced[0].Kind != "analysis" || c.Unpriced[0].Quantity != 120 {
		t.Errorf("unpriced = %+v", c.Unpriced)
	}
	if l := c.Lines[3]; l.Quantity != 62_500 || l.UnitPrice.String() != "0.0043" || l.Amount.String() != "0.004479" {
		t.Errorf("stt line = %+v", l)
	}
}

func TestCostOfEdges(t *testing.T) {
	if CostOf(nil, DefaultPriceTable()) != nil {
		t.Error("no usage has a cost")
	}
	// No table: everything unpriced, total 0, lists never null.
	c := CostOf(&CallUsage{LLM: []LLMUsage{{Provider: "groq", Model: "m", InputTokens: 10}}}, DefaultPriceTable())
	if c.TotalMicros != 0 || len(c.Lines) != 0 || len(c.Unpriced) != 1 || c.Currency != DefaultCurrency {
		t.Errorf("without prices = %+v", c)
	}
	if b, _ := json.Marshal(CostOf(&CallUsage{}, DefaultPriceTable())); string(b) != `{"currency":"USD","total":"0","total_micros":0,"lines":[],"unpriced":[]}` {
		t.Errorf("empty usage cost = %s", b)
	}
	// Half up: 1 token at $0.5 per 1M is 0.5 µ → 1; at $0.499999 per 1M → 0.
	for price, want := range map[Money]int64{500_000: 1, 499_999: 0} {
		c := CostOf(&CallUsage{LLM: []LLMUsage{{Provider: "p", Model: "m", InputTokens: 1}}},
			&PriceTable{Currency: "USD", Prices: []Price{{Provider: "p", Model: "m", Unit: UnitLLMInput, Price: price}}})
		if c.TotalMicros != want {
			t.Errorf("1 token at %s per 1M = %d µ, want %d", price, c.TotalMicros, want)
		}
	}
	// The largest line the bounds allow does not overflow: a day of audio at the highest
	// price (validate.MaxUsageSeconds, validate.MaxPrice).
	c = CostOf(&CallUsage{Telephony: []AudioUsage{{Provider: "p", Seconds: 86_400}}},
		&PriceTable{Currency: "USD", Prices: []Price{{Provider: "p", Model: AnyModel, Unit: UnitPhoneMinute, Price: 1_000_000 * MicrosPerUnit}}})
	if c.TotalMicros != 1_440*1_000_000*MicrosPerUnit {
		t.Errorf("a day at the highest price = %d", c.TotalMicros)
	}
	c = CostOf(&CallUsage{LLM: []LLMUsage{{Provider: "p", Model: "m", InputTokens: 100_000_000}}},
		&PriceTable{Currency: "USD", Prices: []Price{{Provider: "p", Model: "m", Unit: UnitLLMInput, Price: 1_000_000 * MicrosPerUnit}}})
	if c.TotalMicros != 100*1_000_000*MicrosPerUnit {
		t.Errorf("the most tokens at the highest price = %d", c.TotalMicros)
	}
}

func TestAudioMillis(t *testing.T) {
	for s, ms := range map[float64]int64{0.001: 1, 62.5: 62_500, 0.1 + 0.2: 300, 86_399.999: 86_399_999} {
		if got := (AudioUsage{Seconds: s}).Millis(); got != ms {
			t.Errorf("%v s = %d ms, want %d", s, got, ms)
		}
	}
}
