package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func analysis(members string) string { return `{"analysis_config":{` + members + `}}` }

// field is one item of analysis_config.fields with the given members after name.
func field(name, rest string) string {
	return `{"name":"` + name + `","type":"string","description":"What the caller wanted"` + rest + `}`
}

func fieldList(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = field(fmt.Sprintf("f%d", i), "")
	}
	return `"fields":[` + strings.Join(items, ",") + `]`
}

func choices(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`"c%d"`, i)
	}
	return `"choices":[` + strings.Join(items, ",") + `]`
}

func TestAnalysisConfigDefaultIsValid(t *testing.T) {
	a := data.DefaultAgent()
	a.Name = "Support"
	var errs Errors
	ValidateAgent(a, testCatalog, &errs)
	if errs.Err() != nil {
		t.Fatal(errs.Err())
	}
	// A group stored before analysis_config existed reads as the zero value: valid too.
	a.AnalysisConfig = data.AnalysisConfig{}
	ValidateAgent(a, testCatalog, &errs)
	if errs.Err() != nil {
		t.Fatal(errs.Err())
	}
}

func TestAnalysisConfig(t *testing.T) {
	const p = "analysis_config."
	const f0 = p + "fields.0."
	enumField := func(rest string) string {
		return analysis(`"fields":[{"name":"outcome","type":"enum","description":"How it ended"` + rest + `}]`)
	}
	runRules(t, stored, []ruleCase{
		{"empty group", analysis(``), ""},
		{"every member", analysis(`"fields":[` + field("reason", `,"required":true`) + `],"success_criterion":"An appointment was booked.","summary":true,"auto":true`), ""},
		{"no fields", analysis(`"fields":[]`), ""},
		{"fields null", analysis(`"fields":null`), p + "fields"},
		{"50 fields", analysis(fieldList(MaxAnalysisFields)), ""},
		{"51 fields", analysis(fieldList(MaxAnalysisFields + 1)), p + "fields"},
		{"duplicate names", analysis(`"fields":[` + field("reason", "") + `,` + field("reason", "") + `]`), p + "fields.1.name"},
		{"name missing", analysis(`"fields":[{"type":"string","description":"d"}]`), f0 + "name"},
		{"name blank", analysis(`"fields":[` + field(" ", "") + `]`), f0 + "name"},
		{"name 64 characters", analysis(`"fields":[` + field(str(MaxAnalysisFieldName), "") + `]`), ""},
		{"name 65 characters", analysis(`"fields":[` + field(str(MaxAnalysisFieldName+1), "") + `]`), f0 + "name"},
		{"name with a dash and underscore", analysis(`"fields":[` + field("_next-step", "") + `]`), ""},
		{"name starting with a digit", analysis(`"fields":[` + field("1st", "") + `]`), f0 + "name"},
		{"name with a space", analysis(`"fields":[` + field("next step", "") + `]`), f0 + "name"},
		{"name with a dot", analysis(`"fields":[` + field("a.b", "") + `]`), f0 + "name"},
		{"name call_successful", analysis(`"fields":[` + field("call_successful", "") + `]`), f0 + "name"},
		{"name summary", analysis(`"fields":[` + field("summary", "") + `]`), f0 + "name"},
		{"type missing", analysis(`"fields":[{"name":"x","description":"d"}]`), f0 + "type"},
		{"type unknown", analysis(`"fields":[{"name":"x","type":"integer","description":"d"}]`), f0 + "type"},
		{"description missing", analysis(`"fields":[{"name":"x","type":"number"}]`), f0 + "description"},
		{"description blank", analysis(`"fields":[{"name":"x","type":"number","description":"  "}]`), f0 + "description"},
		{"description at its maximum", analysis(`"fields":[{"name":"x","type":"date","description":"` + str(MaxAnalysisFieldDescription) + `"}]`), ""},
		{"description past its maximum", analysis(`"fields":[{"name":"x","type":"date","description":"` + str(MaxAnalysisFieldDescription+1) + `"}]`), f0 + "description"},
		{"required not a boolean", analysis(`"fields":[` + field("x", `,"required":"yes"`) + `]`), f0 + "required"},
		{"enum with choices", enumField(`,"choices":["booked","declined"]`), ""},
		{"enum without choices", enumField(``), f0 + "choices"},
		{"enum with no choices", enumField(`,"choices":[]`), f0 + "choices"},
		{"enum with 50 choices", enumField(`,` + choices(MaxAnalysisChoices)), ""},
		{"enum with 51 choices", enumField(`,` + choices(MaxAnalysisChoices+1)), f0 + "choices"},
		{"enum with a duplicate choice", enumField(`,"choices":["a","b","a"]`), f0 + "choices.2"},
		{"enum with a blank choice", enumField(`,"choices":["a"," "]`), f0 + "choices.1"},
		{"choice at its maximum", enumField(`,"choices":["` + str(MaxIdentifier) + `"]`), ""},
		{"choice past its maximum", enumField(`,"choices":["` + str(MaxIdentifier+1) + `"]`), f0 + "choices.0"},
		{"choices on a string field", analysis(`"fields":[` + field("x", `,"choices":["a"]`) + `]`), f0 + "choices"},
		{"success_criterion null", analysis(`"success_criterion":null`), ""},
		{"success_criterion blank", analysis(`"success_criterion":" "`), p + "success_criterion"},
		{"success_criterion at its maximum", analysis(`"success_criterion":"` + str(MaxSuccessCriterion) + `"`), ""},
		{"success_criterion past its maximum", analysis(`"success_criterion":"` + str(MaxSuccessCriterion+1) + `"`), p + "success_criterion"},
		{"summary not a boolean", analysis(`"summary":1`), p + "summary"},
		{"auto null", analysis(`"auto":null`), p + "auto"},
		{"unknown member", analysis(`"model":"gpt"`), p + "model"},
		{"group null", `{"analysis_config":null}`, "analysis_config"},
	})
	for _, typ := range []string{"string", "number", "boolean", "date"} {
		runRules(t, stored, []ruleCase{{"type " + typ, analysis(`"fields":[{"name":"x","type":"` + typ + `","description":"d"}]`), ""}})
	}
}

func TestAnalysisConfigReportsEveryFault(t *testing.T) {
	_, faults := apply(t, stored(), false, analysis(`"fields":[{"name":"1x","type":"enum","description":""},`+field("ok", "")+`,`+field("ok", "")+`],"success_criterion":""`))
	for _, p := range []string{"analysis_config.fields.0.name", "analysis_config.fields.0.choices", "analysis_config.fields.0.description",
		"analysis_config.fields.2.name", "analysis_config.success_criterion"} {
		if faults[p] == nil {
			t.Errorf("no fault on %s: %v", p, faults)
		}
	}
}

func TestAnalysisConfigMerge(t *testing.T) {
	base := stored()
	crit := "Booked"
	base.AnalysisConfig = data.AnalysisConfig{Fields: []data.AnalysisField{{Name: "a", Type: "string", Description: "d"}}, SuccessCriterion: &crit, Summary: true}
	got, faults := apply(t, base, false, analysis(`"auto":true`))
	if len(faults) != 0 || !got.AnalysisConfig.Auto || !got.AnalysisConfig.Summary || len(got.AnalysisConfig.Fields) != 1 || *got.AnalysisConfig.SuccessCriterion != "Booked" {
		t.Fatalf("a given member replaced the others: %+v %v", got.AnalysisConfig, faults)
	}
	got, _ = apply(t, base, false, analysis(`"fields":[],"success_criterion":null`))
	if len(got.AnalysisConfig.Fields) != 0 || got.AnalysisConfig.SuccessCriterion != nil || !got.AnalysisConfig.Summary {
		t.Fatalf("fields not replaced whole or criterion not cleared: %+v", got.AnalysisConfig)
	}
	if len(base.AnalysisConfig.Fields) != 1 {
		t.Fatal("the merge changed the stored group")
	}
}
