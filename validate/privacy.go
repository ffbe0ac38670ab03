package validate

import (
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
)

// Bounds of the privacy settings (docs/calls.md). Retention is counted in whole days from
// a record's creation: one day is the shortest a sweep running every hour honours to the
// hour, ten years the longest any retention law we know asks of call records.
const (
	MinRetentionDays = 1
	MaxRetentionDays = 3650
	// MaxRedactionRules bounds custom rules per setting: each scans all the text of every
	// call. An agent's rules add to its workspace's, so a call sees at most twice this.
	MaxRedactionRules = redact.MaxRules
	// MaxRedactionPatternBytes bounds one rule's pattern.
	MaxRedactionPatternBytes = redact.MaxPatternBytes
	// MaxRedactionProgramSize bounds one pattern's compiled RE2 program, in instructions:
	// the cost of matching grows with it.
	MaxRedactionProgramSize = redact.MaxProgramSize
	// MaxRedactionRulesProgram bounds a setting's patterns' programs together: what one
	// call's redaction costs grows with it (docs/redaction.md, "What redaction costs").
	MaxRedactionRulesProgram = redact.MaxRulesProgram
	// MaxRedactionRuleName bounds a rule's name, which is its marker.
	MaxRedactionRuleName = redact.MaxNameLen
)

// RedactionDetectors lists the built-in detectors a setting may turn on.
var RedactionDetectors = redact.Detectors

// retentionDays checks a retention given as a number (null, keep forever, is always valid).
func retentionDays(errs *Errors, path string, v *int) {
	if v != nil {
		errs.IntBetween(path, int64(*v), MinRetentionDays, MaxRetentionDays)
	}
}

// Redaction checks a redaction setting under path, every fault at once: unknown or repeated
// detectors, too many rules, a rule's name and its pattern (valid RE2 within the size
// limits, not matching the empty string).
func Redaction(errs *Errors, path string, r data.Redaction) {
	for _, f := range RedactionConfig(r).Validate(path) {
		errs.Add(f.Path, f.Message)
	}
}

// RedactionConfig is r as the redaction engine takes it.
func RedactionConfig(r data.Redaction) redact.Config {
	c := redact.Config{Detectors: r.Detectors}
	for _, rule := range r.Rules {
		c.Rules = append(c.Rules, redact.Rule{Name: rule.Name, Pattern: rule.Pattern})
	}
	return c
}

// WorkspacePrivacy checks a workspace's privacy patch under path.
func WorkspacePrivacy(errs *Errors, path string, p data.WorkspacePrivacyPatch) {
	if p.RetentionDays.Set {
		retentionDays(errs, Join(path, "retention_days"), p.RetentionDays.V)
	}
	if p.KnowledgeRetentionDays.Set {
		retentionDays(errs, Join(path, "knowledge_retention_days"), p.KnowledgeRetentionDays.V)
	}
	if p.Redaction.Set {
		Redaction(errs, Join(path, "redaction"), p.Redaction.V)
	}
}

// AgentPrivacy checks an agent's privacy patch under path.
func AgentPrivacy(errs *Errors, path string, p data.AgentPrivacyPatch) {
	if p.RetentionDays.Set {
		retentionDays(errs, Join(path, "retention_days"), p.RetentionDays.V)
	}
	if p.Redaction.Set {
		Redaction(errs, Join(path, "redaction"), p.Redaction.V)
	}
}

// StoredAgentPrivacy checks an agent's whole privacy member, as an import brings it.
func StoredAgentPrivacy(errs *Errors, path string, p data.AgentPrivacy) {
	retentionDays(errs, Join(path, "retention_days"), p.RetentionDays)
	Redaction(errs, Join(path, "redaction"), p.Redaction)
}

// StoredWorkspacePrivacy checks a workspace's whole privacy member, as an import brings it.
func StoredWorkspacePrivacy(errs *Errors, path string, p data.WorkspacePrivacy) {
	retentionDays(errs, Join(path, "retention_days"), p.RetentionDays)
	retentionDays(errs, Join(path, "knowledge_retention_days"), p.KnowledgeRetentionDays)
	Redaction(errs, Join(path, "redaction"), p.Redaction)
}
