package data

// The analysis_config group (conventions §24): what post-call analysis extracts from each
// call of an agent. Kept in its own file, apart from the six call-time groups, so that a
// group added beside it later merges without touching it.

// Analysis field types.
const (
	AnalysisString  = "string"
	AnalysisNumber  = "number"
	AnalysisBoolean = "boolean"
	AnalysisEnum    = "enum"
	AnalysisDate    = "date" // YYYY-MM-DD
)

// AnalysisFieldTypes lists every analysis field type.
var AnalysisFieldTypes = []string{AnalysisString, AnalysisNumber, AnalysisBoolean, AnalysisEnum, AnalysisDate}

// Keys of a call's analysis that analysis itself writes when the configuration asks for
// them: no declared field may take these names.
const (
	AnalysisKeySuccessful = "call_successful" // a boolean, when success_criterion is set
	AnalysisKeySummary    = "summary"         // a string, when summary is true
)

// AnalysisConfig is the analysis_config group.
type AnalysisConfig struct {
	Fields []AnalysisField `json:"fields"`
	// SuccessCriterion, when set, asks analysis for call_successful: did the call meet it?
	SuccessCriterion *string `json:"success_criterion"`
	// Summary asks analysis for a summary of the call.
	Summary bool `json:"summary"`
	// Auto analyzes every call of the agent when it ends.
	Auto bool `json:"auto"`
}

// MarshalJSON writes fields as [], never null: a stored group written before the group
// existed decodes to the zero value, which is the default.
func (c AnalysisConfig) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

// AnalysisField is an item of analysis_config.fields.
type AnalysisField struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Choices     []string `json:"choices"` // the values of an enum field
	Required    bool     `json:"required"`
}

// MarshalJSON writes choices as [], never null.
func (f AnalysisField) MarshalJSON() ([]byte, error) { return f.appendJSON(nil), nil }

// Field returns the declared field named name, nil when there is none.
func (c *AnalysisConfig) Field(name string) *AnalysisField {
	for i := range c.Fields {
		if c.Fields[i].Name == name {
			return &c.Fields[i]
		}
	}
	return nil
}

// Asks reports whether the configuration asks analysis for anything at all.
func (c *AnalysisConfig) Asks() bool {
	return len(c.Fields) > 0 || c.SuccessCriterion != nil || c.Summary
}

// DefaultAnalysisConfig is the default group: no fields, no success criterion, no summary,
// no automatic analysis. It is also what a group stored before analysis_config existed
// reads as.
func DefaultAnalysisConfig() AnalysisConfig {
	return AnalysisConfig{Fields: []AnalysisField{}}
}

// AnalysisConfigPatch is a given analysis_config: fields are replaced whole.
type AnalysisConfigPatch struct {
	Fields           Opt[[]AnalysisField] `json:"fields"`
	SuccessCriterion Opt[*string]         `json:"success_criterion"`
	Summary          Opt[bool]            `json:"summary"`
	Auto             Opt[bool]            `json:"auto"`
}

// Apply returns stored with the given members replaced.
func (p AnalysisConfigPatch) Apply(stored AnalysisConfig) AnalysisConfig {
	set(&stored.Fields, p.Fields)
	set(&stored.SuccessCriterion, p.SuccessCriterion)
	set(&stored.Summary, p.Summary)
	set(&stored.Auto, p.Auto)
	return stored
}

func (c *AnalysisConfig) appendJSON(dst []byte) []byte {
	dst = append(appendKey(dst, '{', "fields"), '[')
	for i := range c.Fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = c.Fields[i].appendJSON(dst)
	}
	dst = append(dst, ']')
	dst = appendStringPtr(appendKey(dst, ',', "success_criterion"), c.SuccessCriterion)
	dst = appendBool(appendKey(dst, ',', "summary"), c.Summary)
	dst = appendBool(appendKey(dst, ',', "auto"), c.Auto)
	return append(dst, '}')
}

func (f *AnalysisField) appendJSON(dst []byte) []byte {
	dst = appendString(appendKey(dst, '{', "name"), f.Name)
	dst = appendString(appendKey(dst, ',', "type"), f.Type)
	dst = appendString(appendKey(dst, ',', "description"), f.Description)
	dst = appendStrings(appendKey(dst, ',', "choices"), f.Choices)
	dst = appendBool(appendKey(dst, ',', "required"), f.Required)
	return append(dst, '}')
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}
