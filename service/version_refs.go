package service

import (
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// versionRef reads version n of agentID, which a request names in its field at path. A
// version the agent does not have is a fault of that field (422), not a 404: the caller
// sees the agent, whose versions it may list, so the number is a reference like any other
// a body makes (conventions §2), reported with the request's other faults.
func versionRef(tx Tx, agentID, path string, n int) (*data.AgentVersion, error) {
	v, err := tx.AgentVersion(agentID, n)
	if err != nil || v != nil {
		return v, err
	}
	return nil, unknownVersion(path, n)
}

// unknownVersion is the 422 of a field at path naming version n, which the agent lacks.
func unknownVersion(path string, n int) error {
	var errs validate.Errors
	validate.UnknownVersion(&errs, path, n)
	return errs.Err()
}
