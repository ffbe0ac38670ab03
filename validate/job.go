package validate

import (
	"net/url"
	"regexp"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// MaxJobKindLength bounds the kind parameter of GET /api/v1/jobs: the longest kind name
// a feature may register is far shorter, so anything longer is refused before the
// service compares it with the registered kinds.
const MaxJobKindLength = 64

// jobKindForm is the form of a kind name: "<feature>.<work>" in lower case
// (knowledge_base.fetch_url, analysis.call).
var jobKindForm = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// JobFilterParams reads the filters of GET /api/v1/jobs, naming every bad parameter. The
// kind's form is checked here; whether a kind of that name is registered is the
// service's to say, since features register kinds when the services are built.
func JobFilterParams(q url.Values) (data.JobFilter, error) {
	var errs Errors
	f := data.JobFilter{
		Kind:    jobKindParam(&errs, q),
		Status:  enumParam(&errs, q, "status", data.JobStatuses),
		AgentID: idParam(&errs, q, "agent_id", data.PrefixAgent, "an agent"),
		From:    TimeParam(&errs, q, "from"),
		To:      TimeParam(&errs, q, "to"),
	}
	return f, errs.Err()
}

func jobKindParam(errs *Errors, q url.Values) string {
	s := q.Get("kind")
	if s == "" && !q.Has("kind") {
		return ""
	}
	switch {
	case utf8.RuneCountInString(s) > MaxJobKindLength:
		errs.Addf("kind", "The kind parameter must not be greater than %d characters.", MaxJobKindLength)
	case !jobKindForm.MatchString(s):
		errs.Add("kind", "The kind parameter must be a job kind such as analysis.call (docs/jobs.md lists them).")
	}
	return s
}

// JobFilterRange checks a job list's range: to, when given with from, is after it.
func JobFilterRange(f data.JobFilter) error {
	var errs Errors
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		errs.Add("to", "The to parameter must be after from.")
	}
	return errs.Err()
}

// JobKindKnown checks that kind, when given, is one of the registered kinds.
func JobKindKnown(kind string, registered []string) error {
	var errs Errors
	if kind != "" {
		errs.OneOf("kind", kind, registered...)
	}
	return errs.Err()
}
