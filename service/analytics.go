package service

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// AnalyticsService computes call analytics from the rollups storage keeps with the calls.
type AnalyticsService struct{ *base }

var _ data.AnalyticsService = (*AnalyticsService)(nil)

// CallAnalytics implements data.AnalyticsService. The query's parameters arrive parsed;
// here its defaults are taken on the service's clock (to: now, from: 30 days before to,
// interval: day) and its range is checked. A caller limited to some agents sees the sum
// over those agents; an agent it may not see counts nothing.
func (s *AnalyticsService) CallAnalytics(ctx context.Context, q data.CallAnalyticsQuery) (*data.CallAnalytics, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.CallAnalyticsRange(&q, s.now()); err != nil {
		return nil, err
	}
	var agents []string
	switch restrict := visibilityOf(p).agents(q.AgentID); {
	case restrict == nil:
		agents = []string{q.AgentID} // "" is the whole workspace
	default:
		agents = restrict // each visible agent, or none
	}
	step := time.Hour
	if q.Interval == data.IntervalDay {
		step = 24 * time.Hour
	}
	var buckets [][]data.CallBucket
	err = s.store.View(ctx, func(tx Tx) error {
		for _, a := range agents {
			b, err := tx.CallRollups(p.WorkspaceID, a, q.From, q.To, step)
			if err != nil {
				return err
			}
			buckets = append(buckets, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if q.AgentVersion != nil {
		buckets = onlyVersion(buckets, data.VersionKey(q.AgentVersion))
	}
	out := assemble(q.From, q.To, step, buckets)
	out.Versions = []data.VersionTotals{}
	if q.AgentID != "" {
		out.Versions = versionTotals(q.From, step, buckets, out.Series)
	}
	return out, nil
}

// onlyVersion returns the buckets with the counts and cost of one version (a key of
// data.CallBucket.Versions) in place of all calls'.
func onlyVersion(parts [][]data.CallBucket, version string) [][]data.CallBucket {
	out := make([][]data.CallBucket, len(parts))
	for i, part := range parts {
		for _, b := range part {
			r, ok := data.ForVersions(b.Versions)[version]
			if !ok {
				continue
			}
			vb := data.CallBucket{Start: b.Start, Calls: r.Calls, Ended: r.Ended, Failed: r.Failed,
				DurationMS: r.DurationMS, WithDuration: r.WithDuration, Reasons: r.Reasons,
				Versions: map[string]int64{}, Cost: map[string]int64{}, VersionCost: map[string]int64{}}
			for k, n := range b.Versions {
				if strings.HasPrefix(k, version+"|") {
					vb.Versions[k] = n
				}
			}
			for k, n := range b.VersionCost {
				if v, currency, _ := strings.Cut(k, " "); v == version {
					vb.VersionCost[k] = n
					vb.Cost[currency] += n
				}
			}
			out[i] = append(out[i], vb)
		}
	}
	return out
}

// versionTotals sums the buckets' per-version counts and cost: one entry per version,
// oldest first, the calls without a version last, each with its cost in every bucket of
// series (the answer's, laid out from `from` in steps of step).
func versionTotals(from time.Time, step time.Duration, parts [][]data.CallBucket, series []data.CallSeriesPoint) []data.VersionTotals {
	first := from.UTC().Truncate(step)
	sums := map[string]data.CallRollup{}
	costs := versionCosts{}
	for _, part := range parts {
		for _, b := range part {
			for v, r := range data.ForVersions(b.Versions) {
				s := sums[v]
				s.Add(r, 1)
				sums[v] = s
			}
			if i := int(b.Start.Sub(first) / step); i >= 0 && i < len(series) {
				costs.add(b.VersionCost, i)
			}
		}
	}
	for v := range costs {
		if _, ok := sums[v]; !ok {
			sums[v] = data.CallRollup{} // a version known by its cost only (rollups stored before the counts)
		}
	}
	out := make([]data.VersionTotals, 0, len(sums))
	for v, r := range sums {
		t := data.VersionTotals{CallTotals: data.CallTotals{Calls: r.Calls, Ended: r.Ended, Failed: r.Failed, TotalDurationMS: r.DurationMS}}
		if r.WithDuration > 0 {
			t.AverageDurationMS = r.DurationMS / r.WithDuration
		}
		if n, err := strconv.Atoi(v); err == nil {
			t.AgentVersion = &n
		}
		t.CostMicros, t.Series = costs.series(v, series)
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b data.VersionTotals) int {
		switch {
		case a.AgentVersion == nil && b.AgentVersion == nil:
			return 0
		case a.AgentVersion == nil:
			return 1
		case b.AgentVersion == nil:
			return -1
		}
		return *a.AgentVersion - *b.AgentVersion
	})
	return out
}

// assemble lays the buckets of one or more agents out as a series with a point for every
// bucket the range touches, and sums them into totals and reasons. The average duration,
// of the totals and of each bucket alike, counts only the calls that have one.
func assemble(from, to time.Time, step time.Duration, parts [][]data.CallBucket) *data.CallAnalytics {
	first := from.UTC().Truncate(step)
	n := int(validate.AnalyticsBuckets(from, to, step))
	out := &data.CallAnalytics{Series: make([]data.CallSeriesPoint, n), DisconnectionReasons: map[string]int64{}}
	for i := range out.Series {
		out.Series[i].Start = data.NewTime(first.Add(time.Duration(i) * step))
		out.Series[i].CostMicros = map[string]int64{}
	}
	var withDuration int64
	pointsWith := make([]int64, n) // each bucket's calls with a duration
	t := &out.Totals
	t.CostMicros = map[string]int64{}
	for _, part := range parts {
		for _, b := range part {
			i := int(b.Start.Sub(first) / step)
			if i < 0 || i >= n {
				continue
			}
			pt := &out.Series[i]
			pt.Calls += b.Calls
			pt.Ended += b.Ended
			pt.Failed += b.Failed
			pt.TotalDurationMS += b.DurationMS
			pointsWith[i] += b.WithDuration
			t.Calls += b.Calls
			t.Ended += b.Ended
			t.Failed += b.Failed
			t.TotalDurationMS += b.DurationMS
			withDuration += b.WithDuration
			for k, v := range b.Reasons {
				out.DisconnectionReasons[k] += v
			}
			for cur, v := range b.Cost {
				pt.CostMicros[cur] += v
				t.CostMicros[cur] += v
			}
		}
	}
	if withDuration > 0 {
		t.AverageDurationMS = t.TotalDurationMS / withDuration
	}
	for i, w := range pointsWith {
		if w > 0 {
			out.Series[i].AverageDurationMS = out.Series[i].TotalDurationMS / w
		}
	}
	return out
}

// versionCosts gathers CallRollup.VersionCost keys ("<version> <currency>") per version
// and bucket.
type versionCosts map[string]map[int]map[string]int64

func (vc versionCosts) add(costs map[string]int64, bucket int) {
	for k, v := range costs {
		version, currency, _ := strings.Cut(k, " ")
		if vc[version] == nil {
			vc[version] = map[int]map[string]int64{}
		}
		if vc[version][bucket] == nil {
			vc[version][bucket] = map[string]int64{}
		}
		vc[version][bucket][currency] += v
	}
}

// series is version's total cost and its cost in each bucket of series.
func (vc versionCosts) series(version string, series []data.CallSeriesPoint) (map[string]int64, []data.VersionCostPoint) {
	total := map[string]int64{}
	points := make([]data.VersionCostPoint, len(series))
	for i := range points {
		points[i] = data.VersionCostPoint{Start: series[i].Start, CostMicros: map[string]int64{}}
		for cur, m := range vc[version][i] {
			points[i].CostMicros[cur] += m
			total[cur] += m
		}
	}
	return total, points
}
