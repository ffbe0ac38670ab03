package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	workspaceCascades = append(workspaceCascades, func(t *tx, ws string) error {
		// Results go with their run (ON DELETE CASCADE).
		for _, sql := range []string{`DELETE FROM test_runs WHERE workspace_id = $1`, `DELETE FROM agent_tests WHERE workspace_id = $1`} {
			if _, err := t.exec(sql, ws); err != nil {
				return err
			}
		}
		return nil
	})
	agentDeleteHooks = append(agentDeleteHooks, func(t *tx, _, agentID string) error {
		for _, sql := range []string{`DELETE FROM test_runs WHERE agent_id = $1`, `DELETE FROM agent_tests WHERE agent_id = $1`} {
			if _, err := t.exec(sql, agentID); err != nil {
				return err
			}
		}
		return nil
	})
}

const agentTestCols = `id, workspace_id, agent_id, name, caller, variables, max_turns, mocks, criteria,
	required_for_publish, repeat, created_at, updated_at`

func scanAgentTest(row pgx.Row) (*data.AgentTest, error) {
	var at data.AgentTest
	var caller, variables, mocks, criteria []byte
	var created, updated time.Time
	if err := row.Scan(&at.ID, &at.WorkspaceID, &at.AgentID, &at.Name, &caller, &variables, &at.MaxTurns, &mocks,
		&criteria, &at.RequiredForPublish, &at.Repeat, &created, &updated); err != nil {
		return nil, err
	}
	for _, m := range []struct {
		raw []byte
		dst any
	}{{caller, &at.User}, {variables, &at.Variables}, {mocks, &at.Mocks}, {criteria, &at.Criteria}} {
		if err := data.DecodeJSON(m.raw, m.dst); err != nil {
			return nil, fmt.Errorf("decoding agent test %s: %w", at.ID, err)
		}
	}
	at.CreatedAt, at.UpdatedAt = storedTime(created), storedTime(updated)
	return &at, nil
}

// AgentTest implements service.AgentTestTx.
func (t *tx) AgentTest(id string) (*data.AgentTest, error) {
	at, err := scanAgentTest(t.queryRow(`SELECT `+agentTestCols+` FROM agent_tests WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return at, nil
}

// agentTestsSQL reads all of an agent's tests ($1), oldest first, in the order of
// agent_tests_by_agent, the agent compared as a range (keyset.within): a generic plan
// otherwise walked the primary key past every other agent's tests
// (TestScopedListsSeekTheScope).
const agentTestsSQL = `SELECT ` + agentTestCols + ` FROM agent_tests WHERE agent_id >= $1 AND agent_id <= $1 ORDER BY agent_id, id`

// AgentTests implements service.AgentTestTx.
func (t *tx) AgentTests(agentID string) ([]*data.AgentTest, error) {
	rows, err := t.query(agentTestsSQL, agentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*data.AgentTest
	for rows.Next() {
		at, err := scanAgentTest(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, at)
	}
	return out, rows.Err()
}

// AgentTestPage implements service.AgentTestTx.
func (t *tx) AgentTestPage(agentID string, req data.PageRequest) ([]*data.AgentTest, data.Page, error) {
	return pageRows(t, agentTestList(agentID), req, func(rows pgx.Rows) (*data.AgentTest, string, error) {
		at, err := scanAgentTest(rows)
		if err != nil {
			return nil, "", err
		}
		return at, at.ID, nil
	})
}

// agentTestList is the keyset of an agent's tests, in the order of agent_tests_by_agent
// (inAgent).
func agentTestList(agentID string) keyset {
	return inAgent("agent_tests", agentTestCols, agentID)
}

// inAgent is the keyset of a table's rows of one agent, by id, in the order of the
// table's index on (agent_id, id), the agent compared as a range (keyset.within): a
// generic plan otherwise walked the primary key past other agents' rows
// (TestScopedListsSeekTheScope).
func inAgent(table, cols, agentID string) keyset {
	return keyset{binding: binding(table, agentID), cols: cols, key: "id", within: "agent_id",
		from: table + ` WHERE agent_id >= $1 AND agent_id <= $1`, args: []any{agentID}}
}

// PutAgentTest implements service.AgentTestTx.
func (t *tx) PutAgentTest(at *data.AgentTest) error {
	var enc [4][]byte
	for i, v := range []any{at.User, at.Variables, at.Mocks, at.Criteria} {
		var err error
		if enc[i], err = jsonbSafe(v); err != nil {
			return err
		}
	}
	_, err := t.exec(`INSERT INTO agent_tests (`+agentTestCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, caller = excluded.caller, variables = excluded.variables,
			max_turns = excluded.max_turns, mocks = excluded.mocks, criteria = excluded.criteria,
			required_for_publish = excluded.required_for_publish, repeat = excluded.repeat, updated_at = excluded.updated_at`,
		at.ID, at.WorkspaceID, at.AgentID, at.Name, enc[0], enc[1], at.MaxTurns, enc[2], enc[3], at.RequiredForPublish,
		at.Repeat, at.CreatedAt.Time, at.UpdatedAt.Time)
	return err
}

// DeleteAgentTest implements service.AgentTestTx.
func (t *tx) DeleteAgentTest(at *data.AgentTest) error {
	_, err := t.exec(`DELETE FROM agent_tests WHERE id = $1`, at.ID)
	return err
}

const testRunCols = `id, workspace_id, agent_id, agent_version, revision, status, test_ids, summary, job_id, error,
	created_by, created_at, started_at, finished_at, config, tests`

func scanTestRun(row pgx.Row) (*data.StoredTestRun, error) {
	var r data.StoredTestRun
	var testIDs, summary, config, tests []byte
	var created time.Time
	var started, finished *time.Time
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.AgentID, &r.AgentVersion, &r.Revision, &r.Status, &testIDs, &summary,
		&r.JobID, &r.Error, &r.CreatedBy, &created, &started, &finished, &config, &tests); err != nil {
		return nil, err
	}
	for _, m := range []struct {
		raw []byte
		dst any
	}{{testIDs, &r.TestIDs}, {summary, &r.Summary}, {config, &r.Config}, {tests, &r.Tests}} {
		if err := data.DecodeJSON(m.raw, m.dst); err != nil {
			return nil, fmt.Errorf("decoding test run %s: %w", r.ID, err)
		}
	}
	r.CreatedAt, r.StartedAt, r.FinishedAt = storedTime(created), storedTimePtr(started), storedTimePtr(finished)
	return &r, nil
}

func (t *tx) testRuns(sql string, args ...any) ([]*data.StoredTestRun, error) {
	rows, err := t.query(sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*data.StoredTestRun
	for rows.Next() {
		r, err := scanTestRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TestRun implements service.AgentTestTx.
func (t *tx) TestRun(id string) (*data.StoredTestRun, error) {
	r, err := scanTestRun(t.queryRow(`SELECT `+testRunCols+` FROM test_runs WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return r, nil
}

// TestRunPage implements service.AgentTestTx.
func (t *tx) TestRunPage(agentID string, sel service.StateSelection, req data.PageRequest) ([]*data.StoredTestRun, data.Page, error) {
	return pageRows(t, testRunList(agentID, sel), req, func(rows pgx.Rows) (*data.StoredTestRun, string, error) {
		r, err := scanTestRun(rows)
		if err != nil {
			return nil, "", err
		}
		return r, r.ID, nil
	})
}

// testRunList is the keyset of the agent's runs sel selects, in the order of
// test_runs_by_agent (inAgent).
func testRunList(agentID string, sel service.StateSelection) keyset {
	ks := inAgent("test_runs", testRunCols, agentID)
	if sel.Filter != "" {
		// test_runs_by_agent: an agent keeps few runs (service.AgentTestTx.TestRunPage).
		ks.binding = binding("test_runs", agentID, "status="+sel.Filter)
		ks.from += ` AND status = ANY($2)`
		ks.args = append(ks.args, sel.States)
	}
	return ks
}

// TestRunsAt implements service.AgentTestTx.
func (t *tx) TestRunsAt(agentID, revision string) ([]*data.StoredTestRun, error) {
	return t.testRuns(`SELECT `+testRunCols+` FROM test_runs WHERE agent_id = $1 AND revision = $2 ORDER BY id DESC`, agentID, revision)
}

// PutTestRun implements service.AgentTestTx.
func (t *tx) PutTestRun(r *data.StoredTestRun) error {
	var enc [4][]byte
	for i, v := range []any{r.TestIDs, r.Summary, r.Config, r.Tests} {
		var err error
		if enc[i], err = jsonbSafe(v); err != nil {
			return err
		}
	}
	_, err := t.exec(`INSERT INTO test_runs (`+testRunCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, summary = excluded.summary, error = excluded.error,
			started_at = excluded.started_at, finished_at = excluded.finished_at`,
		r.ID, r.WorkspaceID, r.AgentID, r.AgentVersion, r.Revision, r.Status, enc[0], enc[1], r.JobID, r.Error,
		r.CreatedBy, r.CreatedAt.Time, paramTime(r.StartedAt), paramTime(r.FinishedAt), enc[2], enc[3])
	return err
}

// PutTestResult implements service.AgentTestTx.
func (t *tx) PutTestResult(runID string, r *data.TestCaseResult) error {
	raw, err := jsonbSafe(r)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO test_run_results (run_id, test_id, repeat, status, result) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (run_id, test_id, repeat) DO UPDATE SET status = excluded.status, result = excluded.result`,
		runID, r.TestID, r.Repeat, r.Status, raw)
	return err
}

// TestResults implements service.AgentTestTx.
func (t *tx) TestResults(runID string) ([]*data.TestCaseResult, error) {
	rows, err := t.query(`SELECT result FROM test_run_results WHERE run_id = $1 ORDER BY test_id, repeat`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*data.TestCaseResult
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var r data.TestCaseResult
		if err := data.DecodeJSON(raw, &r); err != nil {
			return nil, fmt.Errorf("decoding a result of test run %s: %w", runID, err)
		}
		out = append(out, &r)
	}
	return out, rows.Err()
}

// finishedTestRunsSQL reads the ids of an agent's ($1) finished runs, newest first, as
// agentTestsSQL reads its tests.
const finishedTestRunsSQL = `SELECT id FROM test_runs WHERE agent_id >= $1 AND agent_id <= $1 AND status IN ('passed', 'failed', 'error')
	ORDER BY agent_id DESC, id DESC`

// FinishedTestRunIDs implements service.AgentTestTx, over the index test_runs_by_agent.
func (t *tx) FinishedTestRunIDs(agentID string) ([]string, error) {
	rows, err := t.query(finishedTestRunsSQL, agentID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// DeleteTestRun implements service.AgentTestTx: its results go with it (ON DELETE
// CASCADE).
func (t *tx) DeleteTestRun(id string) error {
	_, err := t.exec(`DELETE FROM test_runs WHERE id = $1`, id)
	return err
}
