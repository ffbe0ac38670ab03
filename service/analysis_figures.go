package service

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.AnalysisFiguresService = (*AnalyticsService)(nil)

// AnalysisFigures implements data.AnalysisFiguresService: one field's figures from the
// per-field rollups storage keeps (docs/analysis.md, "Figures"). The field's type is
// the one agent_version declares, else the agent's current configuration's;
// call_successful is a boolean of every agent.
func (s *AnalyticsService) AnalysisFigures(ctx context.Context, q data.AnalysisQuery) (*data.AnalysisFigures, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	refs := func(tx Tx) error {
		_, err := figuresField(tx, p, q)
		return err
	}
	if err := s.checkInputAndRefs(ctx, validate.AnalysisRange(&q, s.now()), refs); err != nil {
		return nil, err
	}
	step := time.Hour
	if q.Interval == data.IntervalDay {
		step = 24 * time.Hour
	}
	var field data.AnalysisField
	var values, success []data.FieldBucket
	err = s.store.View(ctx, func(tx Tx) error {
		f, err := figuresField(tx, p, q)
		if err != nil {
			return err
		}
		field = *f
		if values, err = tx.FieldRollups(p.WorkspaceID, q.AgentID, q.Field, q.From, q.To, step); err != nil {
			return err
		}
		success = values
		if q.Field != data.AnalysisKeySuccessful {
			success, err = tx.FieldRollups(p.WorkspaceID, q.AgentID, data.AnalysisKeySuccessful, q.From, q.To, step)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if q.Version != nil {
		values, success = ofVersion(values, *q.Version), ofVersion(success, *q.Version)
	}
	return assembleFigures(q, field, step, values, success), nil
}

// figuresField is the field q asks for, as declared: a field the agent (or the version
// asked) does not declare is a fault on field, a version the agent never published one on
// agent_version; an agent the caller may not see is not found.
func figuresField(tx Tx, p *data.Principal, q data.AnalysisQuery) (*data.AnalysisField, error) {
	a, err := tx.Agent(q.AgentID)
	if err != nil {
		return nil, err
	}
	if a == nil || a.WorkspaceID != p.WorkspaceID || !p.CanSeeAgent(q.AgentID) {
		return nil, data.NotFound("Agent")
	}
	cfg, where := &a.AnalysisConfig, "the agent's current configuration (give agent_version for a field of an earlier version)"
	if q.Version != nil {
		v, err := tx.AgentVersion(a.ID, *q.Version)
		switch {
		case err != nil:
			return nil, err
		case v != nil:
			cfg, where = &v.AnalysisConfig, "that agent version"
		case *q.Version > a.LastVersion:
			return nil, unknownVersion("agent_version", *q.Version)
		default:
			// Deleted: its calls keep its number and are counted; their fields read as
			// the agent declares them now, the version's declaration being gone.
			where = fmt.Sprintf("the agent's current configuration (version %d was deleted: its calls' fields read as the agent declares them now)", *q.Version)
		}
	}
	if q.Field == data.AnalysisKeySuccessful {
		return &data.AnalysisField{Name: q.Field, Type: data.AnalysisBoolean}, nil
	}
	if f := cfg.Field(q.Field); f != nil {
		return f, nil
	}
	return nil, data.FieldError("field", "The field parameter must name a field of analysis_config.fields (or call_successful): "+q.Field+" is not declared by "+where+"."+declaredFields(cfg))
}

// declaredFields lists cfg's field names for a message, so that a wrong name is answered
// with the right ones.
func declaredFields(cfg *data.AnalysisConfig) string {
	if len(cfg.Fields) == 0 {
		return " It declares no field."
	}
	names := make([]string, len(cfg.Fields))
	for i, f := range cfg.Fields {
		names[i] = f.Name
	}
	return " Its fields: " + strings.Join(names, ", ") + "."
}

func ofVersion(buckets []data.FieldBucket, version int) []data.FieldBucket {
	return slices.DeleteFunc(slices.Clone(buckets), func(b data.FieldBucket) bool { return b.Version != version })
}

// assembleFigures lays the buckets out: totals, a series point per bucket of the range
// (empty ones with zeros), a point per agent version, and the success rate likewise.
func assembleFigures(q data.AnalysisQuery, f data.AnalysisField, step time.Duration, values, success []data.FieldBucket) *data.AnalysisFigures {
	first := q.From.UTC().Truncate(step)
	n := int(validate.AnalyticsBuckets(q.From, q.To, step))
	out := &data.AnalysisFigures{AgentID: q.AgentID, Field: q.Field, Type: f.Type, AgentVersion: q.Version,
		From: data.NewTime(q.From), To: data.NewTime(q.To), Series: make([]data.FieldSeriesPoint, n),
		Success: data.SuccessFigures{Series: make([]data.SuccessSeriesPoint, n)}, Versions: []data.FieldVersionPoint{}}
	var total data.FieldRollup
	series := make([]data.FieldRollup, n)
	versions := map[int]*data.FieldRollup{}
	for _, b := range values {
		total.Add(b.FieldRollup, 1)
		if i := int(b.Start.Sub(first) / step); i >= 0 && i < n {
			series[i].Add(b.FieldRollup, 1)
		}
		if versions[b.Version] == nil {
			versions[b.Version] = &data.FieldRollup{}
		}
		versions[b.Version].Add(b.FieldRollup, 1)
	}
	out.FieldFigures = figuresOf(f, total)
	for i := range series {
		out.Series[i] = data.FieldSeriesPoint{Start: data.NewTime(first.Add(time.Duration(i) * step)), FieldFigures: figuresOf(f, series[i])}
		out.Success.Series[i].Start = out.Series[i].Start
	}
	judged := map[int]*data.FieldRollup{}
	for _, b := range success {
		out.Success.Judged += b.Count
		out.Success.Successful += b.Values["true"]
		if i := int(b.Start.Sub(first) / step); i >= 0 && i < n {
			pt := &out.Success.Series[i]
			pt.Judged += b.Count
			pt.Successful += b.Values["true"]
		}
		if judged[b.Version] == nil {
			judged[b.Version] = &data.FieldRollup{}
		}
		judged[b.Version].Add(b.FieldRollup, 1)
	}
	out.Success.Rate = rate(out.Success.Successful, out.Success.Judged)
	for i := range out.Success.Series {
		pt := &out.Success.Series[i]
		pt.Rate = rate(pt.Successful, pt.Judged)
	}
	for v := range versions {
		if judged[v] == nil {
			judged[v] = &data.FieldRollup{}
		}
	}
	for _, v := range slices.Sorted(maps.Keys(judged)) {
		pt := data.FieldVersionPoint{AgentVersion: versionPtr(v), FieldFigures: figuresOf(f, valueOr(versions[v])),
			Judged: judged[v].Count, Successful: judged[v].Values["true"]}
		pt.Rate = rate(pt.Successful, pt.Judged)
		out.Versions = append(out.Versions, pt)
	}
	return out
}

// figuresOf turns a rollup into a field's figures: every choice of an enum and both
// values of a boolean appear, with 0 when no call gave them.
func figuresOf(f data.AnalysisField, r data.FieldRollup) data.FieldFigures {
	out := data.FieldFigures{Count: r.Count, Values: map[string]int64{}}
	switch f.Type {
	case data.AnalysisEnum:
		for _, c := range f.Choices {
			out.Values[c] = 0
		}
	case data.AnalysisBoolean:
		out.Values["true"], out.Values["false"] = 0, 0
	}
	for k, v := range r.Values {
		out.Values[k] += v
	}
	if f.Type == data.AnalysisNumber {
		num := &data.NumberFigures{Count: r.Numbers}
		if r.Numbers > 0 {
			mean := r.Sum / float64(r.Numbers)
			num.Mean = &mean
			if qs := data.SketchQuantiles(r.Sketch, 0.5, 0.9); qs != nil {
				num.P50, num.P90 = &qs[0], &qs[1]
			}
		}
		out.Number = num
	}
	return out
}

func rate(part, whole int64) *float64 {
	if whole == 0 {
		return nil
	}
	r := float64(part) / float64(whole)
	return &r
}

func versionPtr(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}

func valueOr(r *data.FieldRollup) data.FieldRollup {
	if r == nil {
		return data.FieldRollup{}
	}
	return *r
}

// ExportFields implements data.AnalysisFiguresService: the current configuration's fields of
// each agent in scope, oldest agent first, each name once.
func (s *AnalyticsService) ExportFields(ctx context.Context, agentID string) ([]string, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	out := []string{}
	err = s.store.View(ctx, func(tx Tx) error {
		out = out[:0]
		var ids []string
		if agentID != "" {
			ids = []string{agentID}
		} else {
			req := data.PageRequest{PerPage: 100}
			for {
				page, next, err := tx.AgentIDs(p.WorkspaceID, "", visibilityOf(p).agents(""), AgentSearch{}, req)
				if err != nil {
					return err
				}
				ids = append(ids, page...)
				if next.NextCursor == nil {
					break
				}
				req.Cursor = *next.NextCursor
			}
			slices.Reverse(ids) // oldest first: a new agent's columns come last
		}
		seen := map[string]bool{}
		add := func(name string) {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
		// The agents read a page at a time (tx.Agents: one statement each on
		// PostgreSQL), not one by one: 2,000 agents took 1.4 s (walk8).
		for page := range slices.Chunk(ids, 100) {
			agents, err := tx.Agents(page)
			if err != nil {
				return err
			}
			for _, a := range agents {
				if a == nil || a.WorkspaceID != p.WorkspaceID || !p.CanSeeAgent(a.ID) {
					continue
				}
				for _, f := range a.AnalysisConfig.Fields {
					add(f.Name)
				}
				if a.AnalysisConfig.SuccessCriterion != nil {
					add(data.AnalysisKeySuccessful)
				}
				if a.AnalysisConfig.Summary {
					add(data.AnalysisKeySummary)
				}
			}
		}
		return nil
	})
	return out, err
}
