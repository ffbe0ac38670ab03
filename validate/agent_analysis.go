package validate

import (
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of the analysis_config group (docs/analysis.md). The rules below and the
// OpenAPI document (openapi/rules.go) read these.
const (
	// MaxAnalysisFields bounds analysis_config.fields: each field is a column of the CSV
	// export, a property of the model's schema and a rollup kept on every analyzed call.
	MaxAnalysisFields = 50
	// MaxAnalysisFieldName bounds a field's name, a JSON key and a CSV column name.
	MaxAnalysisFieldName = 64
	// MaxAnalysisFieldDescription bounds a field's description, which the model reads.
	MaxAnalysisFieldDescription = 1024
	// MaxAnalysisChoices bounds an enum field's choices: the figures count each value.
	MaxAnalysisChoices = 50
	// MaxSuccessCriterion bounds analysis_config.success_criterion.
	MaxSuccessCriterion = 2000
)

// validateAnalysisConfig: the analysis_config table (conventions §24).
func validateAnalysisConfig(c data.AnalysisConfig, errs *Errors) {
	const p = "analysis_config."
	if len(c.Fields) > MaxAnalysisFields {
		errs.MaxItems(p+"fields", len(c.Fields), MaxAnalysisFields)
	}
	for i, f := range c.Fields {
		fp := Index(p+"fields", i)
		validateAnalysisField(f, fp, errs)
		if f.Name == "" {
			continue
		}
		if first := slices.IndexFunc(c.Fields[:i], func(g data.AnalysisField) bool { return g.Name == f.Name }); first >= 0 {
			errs.Addf(fp+".name", "The %s.name field must be unique: %s has the same name.", fp, Index(p+"fields", first))
		}
	}
	if s := c.SuccessCriterion; s != nil {
		if strings.TrimSpace(*s) == "" {
			errs.Addf(p+"success_criterion", "The %ssuccess_criterion field must not be empty; send null for none.", p)
		}
		errs.MaxLen(p+"success_criterion", *s, MaxSuccessCriterion)
	}
	// summary and auto: booleans; the decoder checks their type.
}

// validateAnalysisField: the fields item table. name, type and description are
// required; choices are an enum field's values, required there and refused elsewhere.
func validateAnalysisField(f data.AnalysisField, path string, errs *Errors) {
	p := path + "."
	switch {
	case strings.TrimSpace(f.Name) == "":
		errs.NotBlank(p+"name", f.Name)
	case f.Name == data.AnalysisKeySuccessful || f.Name == data.AnalysisKeySummary:
		errs.Addf(p+"name", "The %sname field must not be %s: analysis writes it itself (analysis_config.%s).", p, f.Name,
			map[string]string{data.AnalysisKeySuccessful: "success_criterion", data.AnalysisKeySummary: "summary"}[f.Name])
	default:
		if !validName(f.Name) {
			errs.Match(p+"name", f.Name, nameRe, nameForm)
		}
		errs.MaxLen(p+"name", f.Name, MaxAnalysisFieldName)
	}
	enum(errs, p+"type", f.Type, data.AnalysisFieldTypes...)
	requiredString(errs, p+"description", f.Description, MaxAnalysisFieldDescription)
	switch {
	case f.Type == data.AnalysisEnum && len(f.Choices) == 0:
		errs.RequiredWhen(p+"choices", p+"type is enum")
	case f.Type != data.AnalysisEnum && len(f.Choices) > 0:
		errs.Prohibited(p+"choices", p+"type is not enum")
	}
	if len(f.Choices) > MaxAnalysisChoices {
		errs.MaxItems(p+"choices", len(f.Choices), MaxAnalysisChoices)
		return
	}
	for i, c := range f.Choices {
		cp := Index(p+"choices", i)
		errs.NotBlank(cp, c)
		errs.MaxLen(cp, c, MaxIdentifier)
	}
	if len(f.Choices) > 1 {
		noDuplicates(errs, p+"choices", f.Choices)
	}
}
