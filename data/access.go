package data

// Access is what the caller may do with the record a response carries, answered beside
// it as the top-level member "access" (docs/api.md "What a caller may do with a record"). It
// is the caller's, not the record's: events, webhooks, exports and the ETag leave it out,
// and every reader of the record reads the same record.
type Access struct {
	// Write: the caller may change and delete the record (and, for a knowledge base, add,
	// remove and refetch its sources): its role, modules and key scopes allow it, and no
	// agent outside its agent_ids would be acted for (one that uses the knowledge base; one
	// the number routes, or that an open campaign dials from it for). A write is still
	// checked when made: Access is what held when the record was read.
	Write bool `json:"write"`
}

// NumberAccess is Access for a number: what its writes need, and what a campaign's
// dialing from it needs.
type NumberAccess struct {
	// Write is Access.Write.
	Write bool `json:"write"`
	// Dial: the caller may start a campaign that dials from the number: its role, modules
	// and key scopes allow a campaign's create (call_history write), and the number
	// routes, and an open campaign dials from it for, no agent outside its agent_ids (the
	// rule Write's agents part is). A campaign's create is still checked when made.
	Dial bool `json:"dial"`
}

// KnowledgeBaseOfHiddenAgent is the refusal of a change of a knowledge base that an agent
// outside the caller's agent_ids uses (Access.Write false for that reason). It names no
// agent: the caller may not learn which exists (conventions §2). The service refuses with
// it; the console's confirmation of such a change is that refusal.
const KnowledgeBaseOfHiddenAgent = "The knowledge base is used by an agent outside your access (agent_ids): only a token that sees every agent using it may change or delete it."

// NumberOfHiddenAgent is KnowledgeBaseOfHiddenAgent for a number that routes or dials
// calls of an agent outside the caller's agent_ids.
const NumberOfHiddenAgent = "The number routes or dials calls of an agent outside your access (agent_ids): only a token that sees that agent may change or delete it."

// AccessAnswer is the top-level member beside a record that says what the caller may do
// with it, for writing the answer (the server) and keeping it (an Idempotency-Key's claim).
func AccessAnswer[A Access | NumberAccess](a A) map[string]any { return map[string]any{"access": a} }
