package validate

import (
	"regexp"
	"slices"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of a call's usage and of the price table (docs/analysis.md). A day of audio at
// the highest price keeps a cost line's arithmetic within 128 bits (data.CostOf).
const (
	MaxUsageLines      = 20          // items of each usage list
	MaxUsageTokens     = 100_000_000 // input_tokens, output_tokens of one line
	MaxUsageCharacters = 10_000_000  // characters of one line
	MaxUsageSeconds    = 86_400      // seconds of one line: a day
	MaxPrices          = 500         // rows of a price table
	MaxPrice           = 1_000_000   // currency units per unit block
	// MaxAnalysisText bounds a string field's value and the summary in a call's analysis.
	MaxAnalysisText = 5000
)

var currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)

// CallAnalysis checks a call's analysis against the analysis_config of the agent version
// the call ran on (conventions §24): a declared field of the wrong type, an enum value
// outside its choices or a required field missing is a fault on analysis.<field>;
// call_successful must be a boolean and summary a string; undeclared keys are kept as
// given.
func CallAnalysis(errs *Errors, analysis map[string]any, cfg *data.AnalysisConfig) {
	for _, f := range cfg.Fields {
		p := "analysis." + f.Name
		x, given := analysis[f.Name]
		if !given || x == nil {
			if f.Required {
				errs.Addf(p, "The %s field is required: the agent version declares it required.", p)
			}
			continue
		}
		analysisValue(errs, p, f, x)
	}
	if x, ok := analysis[data.AnalysisKeySuccessful]; ok && x != nil {
		if _, isBool := x.(bool); !isBool {
			errs.Addf("analysis."+data.AnalysisKeySuccessful, "The analysis.%s field must be true or false.", data.AnalysisKeySuccessful)
		}
	}
	if x, ok := analysis[data.AnalysisKeySummary]; ok && x != nil {
		analysisValue(errs, "analysis."+data.AnalysisKeySummary, data.AnalysisField{Type: data.AnalysisString}, x)
	}
}

// analysisValue checks one declared field's non-null value.
func analysisValue(errs *Errors, path string, f data.AnalysisField, x any) {
	switch f.Type {
	case data.AnalysisString:
		if s, ok := x.(string); !ok {
			errs.Addf(path, "The %s field must be a string.", path)
		} else {
			errs.MaxLen(path, s, MaxAnalysisText)
		}
	case data.AnalysisNumber:
		if _, ok := data.NumberFloat(x); !ok {
			errs.Addf(path, "The %s field must be a number.", path)
		}
	case data.AnalysisBoolean:
		if _, ok := x.(bool); !ok {
			errs.Addf(path, "The %s field must be true or false.", path)
		}
	case data.AnalysisEnum:
		if s, ok := x.(string); !ok || !slices.Contains(f.Choices, s) {
			errs.OneOf(path, "", f.Choices...) // the message lists the choices
		}
	case data.AnalysisDate:
		s, ok := x.(string)
		if _, err := time.Parse(time.DateOnly, s); !ok || err != nil {
			errs.Addf(path, "The %s field must be a date in the form YYYY-MM-DD.", path)
		}
	}
}

// CallUsage checks usage as a call's body gives it, under path ("usage").
func CallUsage(errs *Errors, path string, u *data.CallUsageInput) {
	if u == nil {
		return
	}
	lines := func(kind string, n int, each func(p string, i int)) {
		p := Join(path, kind)
		if n > MaxUsageLines {
			errs.MaxItems(p, n, MaxUsageLines)
			return
		}
		for i := range n {
			each(Index(p, i), i)
		}
	}
	lines("llm", len(u.LLM), func(p string, i int) {
		l := u.LLM[i]
		usageSource(errs, p, l.Provider, l.Model)
		errs.IntBetween(p+".input_tokens", l.InputTokens, 0, MaxUsageTokens)
		errs.IntBetween(p+".output_tokens", l.OutputTokens, 0, MaxUsageTokens)
	})
	lines("tts", len(u.TTS), func(p string, i int) {
		l := u.TTS[i]
		usageSource(errs, p, l.Provider, l.Model)
		errs.IntBetween(p+".characters", l.Characters, 0, MaxUsageCharacters)
	})
	audio := func(list []data.AudioUsage) func(p string, i int) {
		return func(p string, i int) {
			l := list[i]
			usageSource(errs, p, l.Provider, l.Model)
			usageSeconds(errs, p+".seconds", l.Seconds)
		}
	}
	lines("stt", len(u.STT), audio(u.STT))
	lines("telephony", len(u.Telephony), audio(u.Telephony))
}

func usageSource(errs *Errors, p, provider, model string) {
	requiredString(errs, p+".provider", provider, MaxIdentifier)
	errs.MaxLen(p+".model", model, MaxIdentifier)
}

// usageSeconds: 0 to a day, to the millisecond (at most three decimals), since cost is
// priced per millisecond.
func usageSeconds(errs *Errors, p string, s float64) {
	if s < 0 || s > MaxUsageSeconds {
		errs.FloatBetween(p, s, 0, MaxUsageSeconds)
		return
	}
	ms := s * 1000
	if d := ms - float64(int64(ms+0.5)); d > 1e-6 || d < -1e-6 {
		errs.Addf(p, "The %s field must have at most three decimals (milliseconds).", p)
	}
}

// PriceTable checks a price table: a currency code and its prices, given (an empty list
// is given), at most MaxPrices rows, each a provider, a model (or "*"), a known unit and
// a price from 0 to MaxPrice, and no provider, model and unit priced twice.
func PriceTable(in data.PriceTableSet) error {
	var errs Errors
	if in.Currency == "" {
		errs.Required("currency")
	} else {
		errs.Match("currency", in.Currency, currencyRe, "an ISO 4217 code of three capital letters, such as USD")
	}
	// The table is replaced whole: a body without prices would empty it, so an empty
	// table is sent as "prices": [] (the decoder makes that a non-nil slice).
	if in.Prices == nil {
		errs.Required("prices")
	}
	if len(in.Prices) > MaxPrices {
		errs.MaxItems("prices", len(in.Prices), MaxPrices)
		return errs.Err()
	}
	seen := map[[3]string]int{}
	for i, pr := range in.Prices {
		p := Index("prices", i)
		requiredString(&errs, p+".provider", pr.Provider, MaxIdentifier)
		requiredString(&errs, p+".model", pr.Model, MaxIdentifier)
		enum(&errs, p+".unit", pr.Unit, data.PriceUnits...)
		switch {
		case pr.Price == nil:
			errs.Required(p + ".price")
		case *pr.Price < 0:
			errs.Addf(p+".price", "The %s.price field must not be negative.", p)
		case *pr.Price > MaxPrice*data.MicrosPerUnit:
			errs.Addf(p+".price", "The %s.price field must not be greater than %d.", p, MaxPrice)
		}
		key := [3]string{pr.Provider, pr.Model, pr.Unit}
		if first, dup := seen[key]; dup {
			errs.Addf(p, "The %s field prices the provider, model and unit of %s again.", p, Index("prices", first))
		} else {
			seen[key] = i
		}
	}
	return errs.Err()
}

// AnalysisBackfill checks a backfill's body: both bounds of the range, from before to,
// and a version number when one is named.
func AnalysisBackfill(in data.AnalysisBackfill) error {
	var errs Errors
	for _, f := range []struct {
		path string
		t    data.Time
	}{{"from", in.From}, {"to", in.To}} {
		if f.t.IsZero() {
			errs.Required(f.path)
		} else {
			Timestamp(&errs, f.path, f.t)
		}
	}
	if !in.From.IsZero() && !in.To.IsZero() && !in.To.After(in.From.Time) {
		errs.Add("to", "The to field must be after from.")
	}
	if in.AgentVersion != nil {
		errs.IntMin("agent_version", int64(*in.AgentVersion), 1)
	}
	return errs.Err()
}
