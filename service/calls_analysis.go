package service

import (
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// What a call's write does for post-call analysis and cost (docs/analysis.md): an
// analysis is checked against the fields of the agent version the call ran on and
// stamped with its source and time; usage is priced under the workspace's price table;
// the analysis values the figures count move with the call.

// callAnalysisConfig is the analysis_config a call's analysis is checked against: its
// agent version's, or the agent's current one for a call without a version (an agent
// never published). A version or agent that no longer exists declares nothing.
func callAnalysisConfig(tx Tx, c *data.Call) (*data.AnalysisConfig, error) {
	if c.AgentVersion != nil {
		v, err := tx.AgentVersion(c.AgentID, *c.AgentVersion)
		if err != nil || v == nil {
			return &data.AnalysisConfig{}, err
		}
		return &v.AnalysisConfig, nil
	}
	a, err := tx.Agent(c.AgentID)
	if err != nil || a == nil || a.WorkspaceID != c.WorkspaceID {
		return &data.AnalysisConfig{}, err
	}
	return &a.AnalysisConfig, nil
}

// setAnalysis puts analysis on c from source, checked against cfg, at now: the faults
// are a validation error naming analysis.<field>. A successful analysis clears the last
// analysis error.
func setAnalysis(c *data.Call, analysis map[string]any, cfg *data.AnalysisConfig, source string, now data.Time) error {
	var errs validate.Errors
	validate.CallAnalysis(&errs, analysis, cfg)
	if err := errs.Err(); err != nil {
		return err
	}
	c.Analysis = analysis
	c.AnalysisSource, c.AnalyzedAt, c.AnalysisError = &source, &now, nil
	return nil
}

// priceUsage gives c its cost under the workspace's price table (none without usage).
func priceUsage(tx Tx, c *data.Call) error {
	if c.Usage == nil {
		c.Cost = nil
		return nil
	}
	t, err := priceTable(tx, c.WorkspaceID)
	if err != nil {
		return err
	}
	c.Cost = data.CostOf(c.Usage, t)
	return nil
}

// storeAnalysisValues hands storage the values of c's analysis the figures count, typed
// by cfg, after c is stored.
func storeAnalysisValues(tx Tx, c *data.Call, cfg *data.AnalysisConfig) error {
	return tx.SetCallAnalysisValues(c, data.ValuesOf(c, cfg))
}
