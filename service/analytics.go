package service

import (
	"context"
	"maps"
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
	return assemble(q.From, q.To, step, buckets), nil
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
	versions := versionCosts{}
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
			versions.add(b.VersionCost, i)
		}
	}
	out.Versions = versions.list(out.Series)
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

// list is the versions oldest first (calls without a version first), each with a point
// for every bucket of the series.
func (vc versionCosts) list(series []data.CallSeriesPoint) []data.VersionCost {
	out := []data.VersionCost{}
	for _, version := range slices.SortedFunc(maps.Keys(vc), func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	}) {
		v := data.VersionCost{CostMicros: map[string]int64{}, Series: make([]data.VersionCostPoint, len(series))}
		if n, err := strconv.Atoi(version); err == nil {
			v.AgentVersion = &n
		}
		for i := range v.Series {
			v.Series[i] = data.VersionCostPoint{Start: series[i].Start, CostMicros: map[string]int64{}}
			for cur, m := range vc[version][i] {
				v.Series[i].CostMicros[cur] += m
				v.CostMicros[cur] += m
			}
		}
		out = append(out, v)
	}
	return out
}
