package data

import (
	"context"
	"fmt"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Money is an amount of a currency in millionths (micro-units): every price and cost is
// exact, with no float in its arithmetic. On the wire it is a decimal string such as
// "0.59" (at most six decimals), as Stripe's *_decimal amounts are.
type Money int64

// MicrosPerUnit is how many micro-units make one unit of a currency.
const MicrosPerUnit = 1_000_000

var moneyRe = regexp.MustCompile(`^(-?)(\d{1,12})(?:\.(\d{1,6}))?$`)

// ParseMoney reads a decimal such as "0.59", "-1" or "12.000001": at most 12 integer
// digits and 6 decimals, no exponent (so it fits in micro-units).
func ParseMoney(s string) (Money, error) {
	m := moneyRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a decimal with at most 6 decimals, such as \"0.59\"", s)
	}
	whole, _ := strconv.ParseInt(m[2], 10, 64)
	frac, _ := strconv.ParseInt((m[3] + "000000")[:6], 10, 64)
	v := whole*MicrosPerUnit + frac
	if m[1] == "-" {
		v = -v
	}
	return Money(v), nil
}

// String writes m as a decimal without trailing zeros: "0.59", "1", "-0.000001".
func (m Money) String() string {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	s := sign + strconv.FormatInt(v/MicrosPerUnit, 10)
	if frac := v % MicrosPerUnit; frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	}
	return s
}

// MarshalJSON writes m as a JSON string.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(`"` + m.String() + `"`), nil }

// UnmarshalJSON reads a JSON string holding a decimal (ParseMoney).
func (m *Money) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("a decimal string such as \"0.59\" is expected")
	}
	v, err := ParseMoney(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Price units: what one price in the table is the price of. Tokens and characters are
// priced by the million, as providers list them; seconds of audio by the minute.
const (
	UnitLLMInput     = "llm_input_1m_tokens"
	UnitLLMOutput    = "llm_output_1m_tokens"
	UnitTTSChars     = "tts_1m_characters"
	UnitSTTMinute    = "stt_minute"
	UnitPhoneMinute  = "telephony_minute"
	milliPerMinute   = 60_000
	quantityPerBlock = 1_000_000
)

// PriceUnits lists every price unit.
var PriceUnits = []string{UnitLLMInput, UnitLLMOutput, UnitTTSChars, UnitSTTMinute, UnitPhoneMinute}

// unitBlock is how many of a line's quantity (tokens, characters, milliseconds) one
// price of unit pays for.
func unitBlock(unit string) uint64 {
	if unit == UnitSTTMinute || unit == UnitPhoneMinute {
		return milliPerMinute
	}
	return quantityPerBlock
}

// AnyModel in a price's model matches every model of its provider that has no price of
// its own.
const AnyModel = "*"

// DefaultCurrency is a price table's currency until it is set.
const DefaultCurrency = "USD"

// Price is one row of a workspace's price table: what one unit of provider and model
// costs.
type Price struct {
	Provider string `json:"provider"`
	Model    string `json:"model"` // AnyModel for any model of the provider
	Unit     string `json:"unit"`
	Price    Money  `json:"price"`
}

// PriceTable is a workspace's prices (GET and PUT /api/v1/price-table).
type PriceTable struct {
	Currency  string  `json:"currency"` // ISO 4217
	Prices    []Price `json:"prices"`
	UpdatedAt *Time   `json:"updated_at"` // null until set
}

// DefaultPriceTable is the table of a workspace nobody set prices for: no prices, so
// every usage is unpriced.
func DefaultPriceTable() *PriceTable {
	return &PriceTable{Currency: DefaultCurrency, Prices: []Price{}}
}

// PriceTableSet is the body of PUT /api/v1/price-table: the whole table.
type PriceTableSet struct {
	Currency string     `json:"currency"`
	Prices   []PriceSet `json:"prices"`
}

// PriceSet is a row of PriceTableSet: Price is required.
type PriceSet struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Unit     string `json:"unit"`
	Price    *Money `json:"price" strict:"nonnull"`
}

// PriceTableService reads and sets the caller's workspace's price table (owners and
// admins).
type PriceTableService interface {
	// PriceTable returns the table (the default when none was set). Errors: forbidden.
	PriceTable(ctx context.Context) (*PriceTable, error)
	// SetPriceTable replaces the table; calls keep the cost they were given. Errors:
	// forbidden, validation_failed (a negative price, an unknown unit or currency, a
	// provider, model and unit given twice).
	SetPriceTable(ctx context.Context, in PriceTableSet) (*PriceTable, error)
}

// price finds the price of unit for provider and model: the model's own, else the
// provider's AnyModel price.
func (t *PriceTable) price(provider, model, unit string) (Money, bool) {
	var fallback *Price
	for i := range t.Prices {
		p := &t.Prices[i]
		if p.Provider != provider || p.Unit != unit {
			continue
		}
		if p.Model == model {
			return p.Price, true
		}
		if p.Model == AnyModel {
			fallback = p
		}
	}
	if fallback != nil {
		return fallback.Price, true
	}
	return 0, false
}

// CallCost is what a call's usage cost under the price table when it was set.
type CallCost struct {
	Currency string `json:"currency"`
	// Total is the sum of the lines' amounts (each rounded to the micro-unit).
	Total       Money      `json:"total"`
	TotalMicros int64      `json:"total_micros"`
	Lines       []CostLine `json:"lines"`
	// Unpriced lists the usage the table has no price for: it counts nothing.
	Unpriced []CostLine `json:"unpriced"`
}

// CostLine is one priced quantity of a call's usage.
type CostLine struct {
	// Kind is the usage list it comes from: llm, tts, stt, telephony or analysis.
	Kind     string `json:"kind"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Unit     string `json:"unit"`
	// Quantity is in tokens, characters or milliseconds.
	Quantity     int64 `json:"quantity"`
	UnitPrice    Money `json:"unit_price"`
	Amount       Money `json:"amount"`
	AmountMicros int64 `json:"amount_micros"`
}

// CostOf prices u under t (docs/analysis.md, "Cost"): each quantity times its unit's
// price over the unit's block (a million tokens or characters, a minute of
// milliseconds), rounded half up to the micro-unit; the total is the sum of those
// lines. Quantities without a price are listed in Unpriced and count nothing.
func CostOf(u *CallUsage, t *PriceTable) *CallCost {
	if u == nil {
		return nil
	}
	c := &CallCost{Currency: t.Currency, Lines: []CostLine{}, Unpriced: []CostLine{}}
	add := func(kind, provider, model, unit string, q int64) {
		if q <= 0 {
			return
		}
		line := CostLine{Kind: kind, Provider: provider, Model: model, Unit: unit, Quantity: q}
		p, ok := t.price(provider, model, unit)
		if !ok {
			c.Unpriced = append(c.Unpriced, line)
			return
		}
		line.UnitPrice = p
		line.AmountMicros = priceQuantity(q, int64(p), unitBlock(unit))
		line.Amount = Money(line.AmountMicros)
		c.TotalMicros += line.AmountMicros
		c.Lines = append(c.Lines, line)
	}
	for _, l := range u.LLM {
		add("llm", l.Provider, l.Model, UnitLLMInput, l.InputTokens)
		add("llm", l.Provider, l.Model, UnitLLMOutput, l.OutputTokens)
	}
	for _, l := range u.TTS {
		add("tts", l.Provider, l.Model, UnitTTSChars, l.Characters)
	}
	for _, l := range u.STT {
		add("stt", l.Provider, l.Model, UnitSTTMinute, l.Millis())
	}
	for _, l := range u.Telephony {
		add("telephony", l.Provider, l.Model, UnitPhoneMinute, l.Millis())
	}
	for _, l := range u.Analysis {
		add("analysis", l.Provider, l.Model, UnitLLMInput, l.InputTokens)
		add("analysis", l.Provider, l.Model, UnitLLMOutput, l.OutputTokens)
	}
	c.Total = Money(c.TotalMicros)
	return c
}

// priceQuantity is round(q × price / block), half up, for q ≥ 0 and price ≥ 0, in 128
// bits: a day of audio at the highest price allowed overflows 64.
func priceQuantity(q, price int64, block uint64) int64 {
	hi, lo := bits.Mul64(uint64(q), uint64(price))
	lo, carry := bits.Add64(lo, block/2, 0)
	hi += carry
	quo, _ := bits.Div64(hi, lo, block) // hi < block: the bounds keep q × price < 2^64 × block
	return int64(quo)
}
