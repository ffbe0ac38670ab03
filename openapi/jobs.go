package openapi

import (
	"fmt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// jobFilters are the query parameters of GET /api/v1/jobs.
var jobFilters = []queryParam{
	{"kind", fmt.Sprintf("Only jobs of this kind, one of the kinds this server registers (docs/jobs.md lists them: "+
		"analysis.call, knowledge_base.fetch_url…); another is 422. At most %d characters.", validate.MaxJobKindLength),
		map[string]any{"type": "string", "maxLength": validate.MaxJobKindLength}},
	enumParam("status", "Only jobs in this status. A job waiting for a retry is queued, with attempt and last_error set.", data.JobStatuses...),
	strParam("agent_id", "Only jobs working for this agent (none when the caller may not see it)."),
	timeParam("from", "Jobs created at or after this time."),
	timeParam("to", "Jobs created before this time."),
}

func init() {
	opDocs["GET /api/v1/jobs"] = opDoc{Tag: "Jobs", Summary: "List background jobs",
		Description: "The current workspace's durable background jobs, newest first, each as GET /api/v1/jobs/{job_id} shows it, " +
			"and only those that route would show the caller: jobs of a kind whose module the caller holds (with its read scope, " +
			"on a key with scopes) and of an agent it may see. Find a stuck or failing job with status=queued (attempt and last_error " +
			"tell a retry), status=running, or status=failed. See docs/jobs.md.",
		Out: data.Job{}, Shape: shapeList, Query: jobFilters}
}
