package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	quotaCounters[data.LimitNumbers] = func(t *tx, ws string, upTo int64) (int64, error) {
		return t.countWhereUpTo(`numbers WHERE workspace_id = $1`, upTo, ws)
	}
	workspaceCascades = append(workspaceCascades, func(t *tx, ws string) error {
		_, err := t.exec(`DELETE FROM numbers WHERE workspace_id = $1`, ws)
		return err
	})
	agentDeleteHooks = append(agentDeleteHooks, unbindAgentNumbers)
}

const numberCols = `id, workspace_id, phone_number, nickname, provider, inbound_agent_id, outbound_agent_id, created_at, updated_at, variables`

func scanNumber(row pgx.Row) (*data.Number, error) {
	var n data.Number
	var created, updated time.Time
	var vars []byte
	if err := row.Scan(&n.ID, &n.WorkspaceID, &n.PhoneNumber, &n.Nickname, &n.Provider,
		&n.InboundAgentID, &n.OutboundAgentID, &created, &updated, &vars); err != nil {
		return nil, err
	}
	if err := data.DecodeJSON(vars, &n.Variables); err != nil {
		return nil, fmt.Errorf("decoding number %s: %w", n.ID, err)
	}
	n.CreatedAt, n.UpdatedAt = storedTime(created), storedTime(updated)
	return &n, nil
}

// variablesJSON encodes a number's variables, {} for none.
func variablesJSON(vars map[string]any) ([]byte, error) {
	if len(vars) == 0 {
		return []byte(`{}`), nil
	}
	return json.Marshal(vars)
}

// NumberByPhone implements service.NumberTx.
func (t *tx) NumberByPhone(phone string) (*data.Number, error) {
	n, err := scanNumber(t.queryRow(`SELECT `+numberCols+` FROM numbers WHERE phone_number = $1`, phone))
	if err != nil {
		return nil, noRows(err)
	}
	return n, nil
}

// Number implements service.NumberTx.
func (t *tx) Number(id string) (*data.Number, error) {
	n, err := scanNumber(t.queryRow(`SELECT `+numberCols+` FROM numbers WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return n, nil
}

// Numbers implements service.NumberTx. A number bound to an agent both ways is one row,
// so it is listed once. A q search is the bbolt engine's bounded walk of the list
// (scanPage): the numbers looked at are the workspace's, or the agent's, so both engines
// give the same pages.
func (t *tx) Numbers(ws string, f service.NumberSearch, req data.PageRequest) ([]*data.Number, data.Page, error) {
	scan := func(row pgx.Row) (*data.Number, string, error) {
		n, err := scanNumber(row)
		if err != nil {
			return nil, "", err
		}
		return n, n.ID, nil
	}
	ks := numberList(ws, f)
	if f.Q == "" {
		return pageRows(t, ks, req, func(rows pgx.Rows) (*data.Number, string, error) { return scan(rows) })
	}
	n := len(ks.args)
	ks.args = append(ks.args, data.NumberSearchDigits(f.Q), data.FoldCase(f.Q))
	return scanPage(t, scanWalk{ks: ks, table: "numbers", keep: numberSearchKeep(n), maxScan: f.MaxScan}, req, scan)
}

// numberSearchKeep is data.NumberMatches in SQL, its arguments after the first n: the
// digits in the phone number, or q in the nickname, both folded by data.FoldCase
// (nickname_folded).
func numberSearchKeep(n int) string {
	return fmt.Sprintf(`($%d <> '' AND strpos(phone_number, $%d) > 0) OR strpos(nickname_folded, $%d) > 0`, n+1, n+1, n+2)
}

// numberList is the keyset of the numbers of the workspace, or of f.AgentID, and its
// binding with f.Q. An agent's numbers are a walk of each of its indexes
// (numbers_by_inbound_agent, numbers_by_outbound_agent; keyset.walks), a number bound
// both ways the inbound walk's alone, so a page reads per_page+1 rows a walk: with
// "inbound_agent_id = $2 OR outbound_agent_id = $2" the planner read every number of the
// agent's and sorted them (TestAgentAndAccountListsSeekTheScope). A search
// (scanPage, which walks one index) keeps that condition, its walk bounded by MaxScan
// only in the agent's numbers it looks at.
func numberList(ws string, f service.NumberSearch) keyset {
	ks := inWorkspace("numbers", numberCols, ws)
	ks.binding = binding("numbers", ws, f.AgentID)
	switch {
	case f.AgentID != "" && f.Q == "":
		ks.from, ks.within = `numbers WHERE workspace_id = $1`, ""
		ks.walks = []walk{{col: "inbound_agent_id", vals: []string{f.AgentID}},
			{col: "outbound_agent_id", vals: []string{f.AgentID}, also: "inbound_agent_id IS DISTINCT FROM vals.v"}}
	case f.AgentID != "":
		ks.from += ` AND (inbound_agent_id = $2 OR outbound_agent_id = $2)`
		ks.args = append(ks.args, f.AgentID)
	}
	if f.Q != "" {
		ks.binding = binding(ks.binding, "q", f.Q)
	}
	return ks
}

// InsertNumber implements service.NumberTx: the unique phone_number refuses a second
// registration, from this transaction's snapshot or a concurrent one's commit.
func (t *tx) InsertNumber(n *data.Number) (bool, error) {
	vars, err := variablesJSON(n.Variables)
	if err != nil {
		return false, err
	}
	tag, err := t.exec(`INSERT INTO numbers (`+numberCols+`, nickname_folded) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (phone_number) DO NOTHING`,
		n.ID, n.WorkspaceID, n.PhoneNumber, n.Nickname, n.Provider, n.InboundAgentID, n.OutboundAgentID,
		n.CreatedAt.Time, n.UpdatedAt.Time, vars, data.FoldCase(n.Nickname))
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// PhoneNumberTaken implements service.NumberTx.
func (t *tx) PhoneNumberTaken(phone string) (bool, error) {
	var taken bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM numbers WHERE phone_number = $1)`, phone).Scan(&taken)
	return taken, err
}

// PutNumber implements service.NumberTx; the bound-agent indexes follow the row.
func (t *tx) PutNumber(n *data.Number) error {
	vars, err := variablesJSON(n.Variables)
	if err != nil {
		return err
	}
	_, err = t.exec(`UPDATE numbers SET nickname = $2, provider = $3, inbound_agent_id = $4,
			outbound_agent_id = $5, created_at = $6, updated_at = $7, variables = $8, nickname_folded = $9
		WHERE id = $1`,
		n.ID, n.Nickname, n.Provider, n.InboundAgentID, n.OutboundAgentID, n.CreatedAt.Time, n.UpdatedAt.Time, vars,
		data.FoldCase(n.Nickname))
	return err
}

// DeleteNumber implements service.NumberTx.
func (t *tx) DeleteNumber(id string) error {
	_, err := t.exec(`DELETE FROM numbers WHERE id = $1`, id)
	return err
}

// unbindAgentNumbers is the numbers' part of an agent's delete: a number still bound to
// the agent is unbound (the service unbinds them first, telling each change as an event;
// this keeps storage consistent whoever deletes).
func unbindAgentNumbers(t *tx, ws, agentID string) error {
	_, err := t.exec(`UPDATE numbers SET
			inbound_agent_id = NULLIF(inbound_agent_id, $2),
			outbound_agent_id = NULLIF(outbound_agent_id, $2)
		WHERE workspace_id = $1 AND (inbound_agent_id = $2 OR outbound_agent_id = $2)`, ws, agentID)
	return err
}
