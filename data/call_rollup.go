package data

import "time"

// CallRollup is what some calls add up to in one hour of a workspace's (or an agent's)
// analytics: the storage engines keep one per hour, adjusted in each call's write, and
// answer analytics from them. The JSON names are the bbolt engine's stored encoding.
type CallRollup struct {
	Calls        int64            `json:"c"`
	Ended        int64            `json:"e,omitempty"`
	Failed       int64            `json:"f,omitempty"`
	DurationMS   int64            `json:"d,omitempty"`
	WithDuration int64            `json:"n,omitempty"` // calls that have a duration
	Reasons      map[string]int64 `json:"r,omitempty"`
	// Versions are the same counts per agent_version (call_rollup_versions.go); only an
	// agent's rollups carry them.
	Versions map[string]int64 `json:"v,omitempty"`
	// Cost sums the calls' cost in micro-units per currency, VersionCost per agent_version
	// and currency ("3 USD"; " USD" for calls without a version). Calls stored before
	// cost existed have none, so their contributions stay exact without a migration.
	Cost        map[string]int64 `json:"k,omitempty"`
	VersionCost map[string]int64 `json:"vk,omitempty"`
}

// RollupOf is one call's contribution to the hour it was created in.
func RollupOf(c *Call) CallRollup {
	r := CallRollup{Calls: 1}
	switch c.Status {
	case CallEnded:
		r.Ended = 1
	case CallFailed:
		r.Failed = 1
	}
	if c.DurationMS != nil {
		r.DurationMS, r.WithDuration = *c.DurationMS, 1
	}
	if c.DisconnectionReason != nil {
		r.Reasons = map[string]int64{*c.DisconnectionReason: 1}
	}
	r.Versions = versionCounts(VersionKey(c.AgentVersion), r)
	if c.Cost != nil && c.Cost.TotalMicros != 0 {
		r.Cost = map[string]int64{c.Cost.Currency: c.Cost.TotalMicros}
		r.VersionCost = map[string]int64{VersionCostKey(VersionKey(c.AgentVersion), c.Cost.Currency): c.Cost.TotalMicros}
	}
	return r
}

// VersionCostKey is the key of CallRollup.VersionCost for a version ("" for none) and a
// currency.
func VersionCostKey(version, currency string) string { return version + " " + currency }

// Add adds sign times o to r, dropping the reasons that reach 0.
func (r *CallRollup) Add(o CallRollup, sign int64) {
	r.Calls += sign * o.Calls
	r.Ended += sign * o.Ended
	r.Failed += sign * o.Failed
	r.DurationMS += sign * o.DurationMS
	r.WithDuration += sign * o.WithDuration
	r.Reasons = addCounts(r.Reasons, o.Reasons, sign)
	r.Cost = addCounts(r.Cost, o.Cost, sign)
	r.VersionCost = addCounts(r.VersionCost, o.VersionCost, sign)
	r.Versions = addCounts(r.Versions, o.Versions, sign)
}

// Negated is -r.
func (r CallRollup) Negated() CallRollup {
	var n CallRollup
	n.Add(r, -1)
	return n
}

// IsZero reports whether r changes nothing.
func (r CallRollup) IsZero() bool {
	return r.Calls == 0 && r.Ended == 0 && r.Failed == 0 && r.DurationMS == 0 && r.WithDuration == 0 && len(r.Reasons) == 0 &&
		len(r.Cost) == 0 && len(r.VersionCost) == 0 && len(r.Versions) == 0
}

// RollupFeed feeds fn the rollups of [from, to), each under the UTC hour it belongs to.
type RollupFeed func(from, to time.Time, fn func(hour time.Time, r CallRollup)) error

// SumCallRollups answers an analytics series over [from, to) in buckets of step (whole
// hours, aligned to step): the whole hours of the range from hours (the stored rollups),
// the partial hours at either edge from edges (the calls created there, one each). The
// buckets without calls are left out; the result is empty, not nil, when none has any.
// Each rollup fed must be the caller's to keep: the first of a bucket is taken as is.
func SumCallRollups(from, to time.Time, step time.Duration, hours, edges RollupFeed) ([]CallBucket, error) {
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) || step <= 0 {
		return nil, nil
	}
	first := from.Truncate(step)
	sums := make([]CallRollup, (to.Sub(first)+step-1)/step) // one per bucket the range touches
	add := func(hourStart time.Time, r CallRollup) {
		i := int(hourStart.Sub(first) / step)
		if i < 0 || i >= len(sums) {
			return
		}
		if sums[i].Calls == 0 {
			sums[i] = r // the first hour of a bucket is taken as decoded, reasons and all
			return
		}
		sums[i].Add(r, 1)
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
	n := 0
	for i := range sums {
		if sums[i].Calls > 0 {
			n++
		}
	}
	out := make([]CallBucket, 0, n)
	for i, r := range sums {
		if r.Calls == 0 {
			continue
		}
		out = append(out, CallBucket{
			Start: first.Add(time.Duration(i) * step), Calls: r.Calls, Ended: r.Ended, Failed: r.Failed,
			DurationMS: r.DurationMS, WithDuration: r.WithDuration, Reasons: r.Reasons,
			Cost: r.Cost, VersionCost: r.VersionCost, Versions: r.Versions,
		})
	}
	return out, nil
}

// splitHours splits [from, to) into its whole UTC hours (nil when it holds none) and the
// non-empty partial hours at either edge, each within one hour (an edge's feed counts its
// span under the hour it starts in: bolt's and postgres' countCalls).
func splitHours(from, to time.Time) (whole *[2]time.Time, parts [][2]time.Time) {
	fullFrom := from.Truncate(time.Hour)
	if fullFrom.Before(from) {
		fullFrom = fullFrom.Add(time.Hour)
	}
	fullTo := to.Truncate(time.Hour)
	spans := [][2]time.Time{{from, to}}
	if !fullFrom.After(fullTo) { // the range reaches an hour's start: no part crosses one
		if fullFrom.Before(fullTo) {
			whole = &[2]time.Time{fullFrom, fullTo}
		}
		spans = [][2]time.Time{{from, fullFrom}, {fullTo, to}}
	}
	for _, s := range spans {
		if s[0].Before(s[1]) {
			parts = append(parts, s)
		}
	}
	return whole, parts
}
