package data

import (
	"context"
	"math"
	"slices"
	"strconv"
	"time"
)

// Where a call's analysis came from (analysis_source).
const (
	AnalysisRuntime = "runtime" // a POST or PUT /api/v1/calls
	AnalysisLLM     = "llm"     // post-call analysis by the agent's model
)

// AnalysisError is why a call's last post-call analysis failed.
type AnalysisError struct {
	Message string `json:"message"`
	At      Time   `json:"at"`
}

// AnalysisValues are the values of a call's analysis that the figures count, typed by
// the fields of the agent version the call ran on (the service derives them when the
// analysis is set; storage keeps them beside the call and the rollups from them).
// Keeping them means a call's contribution is taken back exactly as it was added, even
// when its agent's configuration has changed since.
type AnalysisValues struct {
	AgentID string `json:"agent_id"`
	// Version is the call's agent_version, 0 for none.
	Version int `json:"version"`
	// Hour is the UTC hour the call was created in.
	Hour   time.Time    `json:"hour"`
	Fields []FieldValue `json:"fields"`
}

// FieldValue is one field's value in a call's analysis: Value for an enum or boolean
// (counted per value), Number for a number, neither for a string or date (counted as
// present).
type FieldValue struct {
	Field  string   `json:"f"`
	Value  string   `json:"v,omitempty"`
	Number *float64 `json:"n,omitempty"`
}

// ValuesOf types a call's analysis by cfg: every declared field with a non-null value,
// and call_successful when it is a boolean. Nil when there is nothing to count.
func ValuesOf(c *Call, cfg *AnalysisConfig) *AnalysisValues {
	if c.Analysis == nil {
		return nil
	}
	v := &AnalysisValues{AgentID: c.AgentID, Hour: c.CreatedAt.UTC().Truncate(time.Hour)}
	if c.AgentVersion != nil {
		v.Version = *c.AgentVersion
	}
	for _, f := range cfg.Fields {
		x, ok := c.Analysis[f.Name]
		if !ok || x == nil {
			continue
		}
		fv := FieldValue{Field: f.Name}
		switch f.Type {
		case AnalysisEnum:
			fv.Value, _ = x.(string)
		case AnalysisBoolean:
			b, _ := x.(bool)
			fv.Value = strconv.FormatBool(b)
		case AnalysisNumber:
			n, _ := NumberFloat(x) // a rollup's sum and quantiles are float64 anyway
			fv.Number = &n
		}
		v.Fields = append(v.Fields, fv)
	}
	if b, ok := c.Analysis[AnalysisKeySuccessful].(bool); ok {
		v.Fields = append(v.Fields, FieldValue{Field: AnalysisKeySuccessful, Value: strconv.FormatBool(b)})
	}
	if len(v.Fields) == 0 {
		return nil
	}
	return v
}

// FieldRollup is what the values of one field add up to, in one hour, for one agent
// version: the storage engines keep one per (agent, field, hour, version), adjusted in
// each call's analysis write, and answer the figures from them. The JSON names are the
// bbolt engine's stored encoding.
type FieldRollup struct {
	// Count is the calls with a value for the field.
	Count int64 `json:"c"`
	// Values counts an enum's or a boolean's calls per value.
	Values map[string]int64 `json:"v,omitempty"`
	// Numbers, Sum and Sketch describe a number field's values: how many, their sum,
	// and their distribution (NumberSketch).
	Numbers int64            `json:"n,omitempty"`
	Sum     float64          `json:"s,omitempty"`
	Sketch  map[string]int64 `json:"h,omitempty"`
}

// RollupOfValue is one value's contribution.
func RollupOfValue(v FieldValue) FieldRollup {
	r := FieldRollup{Count: 1}
	if v.Value != "" {
		r.Values = map[string]int64{v.Value: 1}
	}
	if v.Number != nil {
		r.Numbers, r.Sum = 1, *v.Number
		r.Sketch = map[string]int64{SketchKey(*v.Number): 1}
	}
	return r
}

// Add adds sign times o to r, dropping the counts that reach 0.
func (r *FieldRollup) Add(o FieldRollup, sign int64) {
	r.Count += sign * o.Count
	r.Numbers += sign * o.Numbers
	r.Sum += float64(sign) * o.Sum
	r.Values = addCounts(r.Values, o.Values, sign)
	r.Sketch = addCounts(r.Sketch, o.Sketch, sign)
}

func addCounts(dst, src map[string]int64, sign int64) map[string]int64 {
	for k, v := range src {
		if dst == nil {
			dst = map[string]int64{}
		}
		dst[k] += sign * v
		if dst[k] == 0 {
			delete(dst, k)
		}
	}
	return dst
}

// The number sketch: a value v > 0 falls in bucket ceil(log_γ v), γ = (1+α)/(1-α) with
// α = 1%, and is shown as the bucket's middle 2γ^i/(γ+1), within 1% of any value in it
// (the method of DDSketch, Masson et al., VLDB 2019). Negative values mirror the
// positive ones; values nearer 0 than sketchZero are 0. Buckets add across hours and
// versions, so percentiles over any range are read from the rollups alone.
const (
	sketchAlpha = 0.01
	sketchZero  = 1e-9
)

var sketchGamma = (1 + sketchAlpha) / (1 - sketchAlpha)

// SketchKey is the bucket of v: "z", "p<i>" or "n<i>".
func SketchKey(v float64) string {
	switch {
	case math.Abs(v) < sketchZero:
		return "z"
	case v > 0:
		return "p" + strconv.Itoa(sketchIndex(v))
	default:
		return "n" + strconv.Itoa(sketchIndex(-v))
	}
}

func sketchIndex(v float64) int { return int(math.Ceil(math.Log(v) / math.Log(sketchGamma))) }

// sketchValue is the value a bucket stands for; ok is false for a key that is none.
func sketchValue(key string) (float64, bool) {
	if key == "z" {
		return 0, true
	}
	if len(key) < 2 {
		return 0, false
	}
	i, err := strconv.Atoi(key[1:])
	if err != nil {
		return 0, false
	}
	v := 2 * math.Pow(sketchGamma, float64(i)) / (sketchGamma + 1)
	switch key[0] {
	case 'p':
		return v, true
	case 'n':
		return -v, true
	}
	return 0, false
}

// SketchQuantiles returns the values at each q of qs (0 < q ≤ 1, nearest rank) of the
// sketch, within 1% of the exact ones; nil when it holds no value.
func SketchQuantiles(sketch map[string]int64, qs ...float64) []float64 {
	type bucket struct {
		v float64
		n int64
	}
	var bs []bucket
	var total int64
	for k, n := range sketch {
		if v, ok := sketchValue(k); ok && n > 0 {
			bs = append(bs, bucket{v, n})
			total += n
		}
	}
	if total == 0 {
		return nil
	}
	slices.SortFunc(bs, func(a, b bucket) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	out := make([]float64, len(qs))
	for i, q := range qs {
		rank := int64(math.Ceil(q * float64(total)))
		rank = max(1, min(rank, total))
		var seen int64
		for _, b := range bs {
			if seen += b.n; seen >= rank {
				out[i] = b.v
				break
			}
		}
	}
	return out
}

// FieldBucket is what one field's values add up to in one bucket of a series, for one
// agent version (0: calls without a version).
type FieldBucket struct {
	Start   time.Time
	Version int
	FieldRollup
}

// FieldFeed feeds fn the field rollups of [from, to), each under the UTC hour and the
// agent version it belongs to.
type FieldFeed func(from, to time.Time, fn func(hour time.Time, version int, r FieldRollup)) error

// SumFieldRollups answers a field's series over [from, to) in buckets of step (whole
// hours, aligned to step), one bucket per version: the whole hours of the range from
// hours (the stored rollups), the partial hours at either edge from edges (the calls'
// stored values). Buckets are ordered by start, then version; empty ones are left out.
func SumFieldRollups(from, to time.Time, step time.Duration, hours, edges FieldFeed) ([]FieldBucket, error) {
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) || step <= 0 {
		return []FieldBucket{}, nil
	}
	first := from.Truncate(step)
	type key struct {
		i       int
		version int
	}
	sums := map[key]*FieldRollup{}
	add := func(hour time.Time, version int, r FieldRollup) {
		i := int(hour.Sub(first) / step)
		if hour.Before(first) {
			return
		}
		k := key{i, version}
		if sums[k] == nil {
			sums[k] = &FieldRollup{}
		}
		sums[k].Add(r, 1)
	}
	whole, parts := splitHours(from, to)
	if whole != nil {
		if err := hours(whole[0], whole[1], add); err != nil {
			return nil, err
		}
	}
	for _, s := range parts {
		if err := edges(s[0], s[1], add); err != nil {
			return nil, err
		}
	}
	out := make([]FieldBucket, 0, len(sums))
	for k, r := range sums {
		if r.Count != 0 {
			out = append(out, FieldBucket{Start: first.Add(time.Duration(k.i) * step), Version: k.version, FieldRollup: *r})
		}
	}
	slices.SortFunc(out, func(a, b FieldBucket) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	return out, nil
}

// AnalysisQuery asks for the figures of one field of one agent over [From, To): GET
// /api/v1/analytics/analysis.
type AnalysisQuery struct {
	AgentID  string
	Field    string
	From, To time.Time
	// Version, when not nil, keeps only the calls of that agent version.
	Version  *int
	Interval string
}

// AnalysisFigures is the body of GET /api/v1/analytics/analysis (conventions §24).
type AnalysisFigures struct {
	AgentID      string `json:"agent_id"`
	Field        string `json:"field"`
	Type         string `json:"type"`
	AgentVersion *int   `json:"agent_version"`
	From         Time   `json:"from"`
	To           Time   `json:"to"`
	FieldFigures
	// Success is the rate of calls judged successful (analysis.call_successful) per
	// bucket.
	Success SuccessFigures `json:"success"`
	// Series is the field's figures per bucket; Versions per agent version.
	Series   []FieldSeriesPoint  `json:"series"`
	Versions []FieldVersionPoint `json:"versions"`
}

// FieldFigures are one field's figures over some calls.
type FieldFigures struct {
	// Count is the calls whose analysis has a value for the field.
	Count int64 `json:"count"`
	// Values counts the calls per value (enum and boolean fields; {} otherwise).
	Values map[string]int64 `json:"values"`
	// Number describes a number field's values; null for other types.
	Number *NumberFigures `json:"number"`
}

// NumberFigures describe a number field's values: the mean exactly (up to float
// addition), p50 and p90 within 1% (the sketch of FieldRollup).
type NumberFigures struct {
	Count int64    `json:"count"`
	Mean  *float64 `json:"mean"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
}

// SuccessFigures are the calls judged successful or not.
type SuccessFigures struct {
	Judged     int64                `json:"judged"`
	Successful int64                `json:"successful"`
	Rate       *float64             `json:"rate"` // null when none was judged
	Series     []SuccessSeriesPoint `json:"series"`
}

// SuccessSeriesPoint is one bucket of the success series.
type SuccessSeriesPoint struct {
	Start      Time     `json:"start"`
	Judged     int64    `json:"judged"`
	Successful int64    `json:"successful"`
	Rate       *float64 `json:"rate"`
}

// FieldSeriesPoint is one bucket of a field's series.
type FieldSeriesPoint struct {
	Start Time `json:"start"`
	FieldFigures
}

// FieldVersionPoint is a field's figures and the success rate over the calls of one
// agent version (null: calls without a version).
type FieldVersionPoint struct {
	AgentVersion *int `json:"agent_version"`
	FieldFigures
	Judged     int64    `json:"judged"`
	Successful int64    `json:"successful"`
	Rate       *float64 `json:"rate"`
}

// AnalysisFiguresService answers post-call analysis figures.
type AnalysisFiguresService interface {
	// AnalysisFigures returns one field's figures. Errors: validation_failed (a missing
	// agent_id or field, a field the agent does not declare, a version it lacks, a bad
	// range), not_found (an agent the caller may not see).
	AnalysisFigures(ctx context.Context, q AnalysisQuery) (*AnalysisFigures, error)
	// ExportFields returns the analysis.<name> columns a CSV export of the calls of
	// agentID ("" for every agent the caller sees) carries: each agent's declared
	// fields, then call_successful and summary when asked for, in the agents' order.
	ExportFields(ctx context.Context, agentID string) ([]string, error)
}
