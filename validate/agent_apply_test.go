package validate

import (
	"encoding/json"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// applyAgentBody is what the service does with a create or update body: decode it
// strictly into a data.AgentUpdate, merge it into base (data.AgentUpdate.Apply), and
// report the decoder's faults first, then those of AgentChange they do not cover.
func applyAgentBody(base *data.Agent, obj map[string]json.RawMessage, creating bool, cat *data.Catalog) (*data.Agent, *Errors) {
	var in data.AgentUpdate
	errs := &Errors{}
	strictjson.StrictObject(obj, &in, "", errs)
	a := in.Apply(base)
	errs.AddUncovered(AgentChange(a, &in, creating, cat))
	return a, errs
}

// readOnlyAgentFields are the members of an agent record a body may not set.
var readOnlyAgentFields = map[string]bool{
	"id": true, "workspace_id": true, "status": true, "published_version": true,
	"created_at": true, "updated_at": true, "published_at": true, "used_variables": true,
}
