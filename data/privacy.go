package data

import "encoding/json"

// Redaction is a redaction setting of a workspace or an agent: the built-in detectors that
// are on and custom rules. Text the setting covers (transcripts, variables, analysis) has
// each match replaced by a typed marker ("[card]", "[email]", "[name]" of a rule) before it
// is stored; docs/calls.md describes the detectors.
type Redaction struct {
	Detectors []string        `json:"detectors"`
	Rules     []RedactionRule `json:"rules"`
}

// RedactionRule is a custom detector: matches of Pattern (RE2) become "[Name]".
type RedactionRule struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern"`
}

// Empty reports whether the setting redacts nothing.
func (r Redaction) Empty() bool { return len(r.Detectors) == 0 && len(r.Rules) == 0 }

// normalized gives absent lists their empty values, so clients read [] and storage holds
// one form.
func (r Redaction) normalized() Redaction {
	if r.Detectors == nil {
		r.Detectors = []string{}
	}
	if r.Rules == nil {
		r.Rules = []RedactionRule{}
	}
	return r
}

// WorkspacePrivacy is the privacy member of a workspace: how long its calls and knowledge
// files are kept, and what is redacted from every call. nil retention keeps forever.
type WorkspacePrivacy struct {
	// RetentionDays: a call created more than this many days ago is deleted (unless on
	// legal hold or its agent sets its own retention_days).
	RetentionDays *int `json:"retention_days"`
	// KnowledgeRetentionDays: a knowledge base file uploaded more than this many days ago
	// is deleted with its text and chunks.
	KnowledgeRetentionDays *int      `json:"knowledge_retention_days"`
	Redaction              Redaction `json:"redaction"`
}

// Normalized returns p with empty lists for absent ones.
func (p WorkspacePrivacy) Normalized() WorkspacePrivacy {
	p.Redaction = p.Redaction.normalized()
	return p
}

// AgentPrivacy is the privacy member of an agent. RetentionDays, when not nil, replaces
// the workspace's for the agent's calls; Redaction adds to the workspace's (an agent can
// add redaction, never remove what its workspace requires).
type AgentPrivacy struct {
	RetentionDays *int      `json:"retention_days"`
	Redaction     Redaction `json:"redaction"`
}

// Normalized returns p with empty lists for absent ones.
func (p AgentPrivacy) Normalized() AgentPrivacy {
	p.Redaction = p.Redaction.normalized()
	return p
}

// WorkspacePrivacyPatch is a given privacy member of a workspace update: each member
// optional; a retention given as null keeps forever; a given redaction replaces the stored
// one whole.
type WorkspacePrivacyPatch struct {
	RetentionDays          Opt[*int]      `json:"retention_days"`
	KnowledgeRetentionDays Opt[*int]      `json:"knowledge_retention_days"`
	Redaction              Opt[Redaction] `json:"redaction"`
}

// Apply returns stored with the patch merged in.
func (p WorkspacePrivacyPatch) Apply(stored WorkspacePrivacy) WorkspacePrivacy {
	if p.RetentionDays.Set {
		stored.RetentionDays = p.RetentionDays.V
	}
	if p.KnowledgeRetentionDays.Set {
		stored.KnowledgeRetentionDays = p.KnowledgeRetentionDays.V
	}
	if p.Redaction.Set {
		stored.Redaction = p.Redaction.V
	}
	return stored.Normalized()
}

// AgentPrivacyPatch is a given privacy member of an agent update; null retention_days
// returns the agent to its workspace's retention.
type AgentPrivacyPatch struct {
	RetentionDays Opt[*int]      `json:"retention_days"`
	Redaction     Opt[Redaction] `json:"redaction"`
}

// Apply returns stored with the patch merged in.
func (p AgentPrivacyPatch) Apply(stored AgentPrivacy) AgentPrivacy {
	if p.RetentionDays.Set {
		stored.RetentionDays = p.RetentionDays.V
	}
	if p.Redaction.Set {
		stored.Redaction = p.Redaction.V
	}
	return stored.Normalized()
}

// EventRetentionSwept is recorded once per workspace by each retention sweep that deleted
// something (docs/calls.md).
const EventRetentionSwept = "retention.swept"

// RetentionSwept is the data of a retention.swept event: counts only, never a record.
type RetentionSwept struct {
	// CallsDeleted counts the calls deleted for their workspace's or agent's retention.
	CallsDeleted int `json:"calls_deleted"`
	// KnowledgeFilesDeleted counts the knowledge base files deleted.
	KnowledgeFilesDeleted int `json:"knowledge_files_deleted"`
	// CallsOnHold counts expired calls kept because they are on legal hold.
	CallsOnHold int `json:"calls_on_hold"`
	// ConversationsDeleted counts the conversations deleted with their calls (an ended
	// conversation goes with the call it became).
	ConversationsDeleted int `json:"conversations_deleted"`
	// CampaignsDeleted counts the finished campaigns deleted, with their recipients, for
	// their workspace's retention_days.
	CampaignsDeleted int `json:"campaigns_deleted"`
}

// MarshalJSON writes absent lists as [], never null.
func (r Redaction) MarshalJSON() ([]byte, error) {
	type plain Redaction
	return json.Marshal(plain(r.normalized()))
}
