package server_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// operation is one route of the OpenAPI document with what it requires.
type operation struct {
	method, path string // path without /api/v1
	req          requires
}

// routePattern is a route as docs/api.md names it in its access tables: `GET /calls`,
// `/webhooks…` (every route under the path), `GET /workspaces/{workspace_id}/users…`.
type routePattern struct {
	method, path string
	prefix       bool
}

var docRoute = regexp.MustCompile("`((?:GET|POST|PUT|DELETE) )?(/[^`\\s]*)`")

// patternsOf reads the route patterns of a table cell.
func patternsOf(cell string) []routePattern {
	var out []routePattern
	for _, m := range docRoute.FindAllStringSubmatch(cell, -1) {
		p := routePattern{method: strings.TrimSpace(m[1]), path: m[2]}
		p.path, p.prefix = strings.CutSuffix(p.path, "…")
		out = append(out, p)
	}
	return out
}

func (p routePattern) matches(op operation) bool {
	if p.method != "" && p.method != op.method {
		return false
	}
	if p.prefix {
		return op.path == p.path || strings.HasPrefix(op.path, p.path+"/")
	}
	return op.path == p.path
}

// specificity orders patterns matching one route: an exact route over a prefix, a longer
// path over a shorter, a method over none.
func (p routePattern) specificity() int {
	n := len(p.path) * 4
	if !p.prefix {
		n += 2
	}
	if p.method != "" {
		n++
	}
	return n
}

// docRow is one row of an access table: its first cell's words and its other cells.
type docRow struct {
	first    string
	cells    []string
	patterns []routePattern
}

// accessTable returns the rows of the first table after heading in docs/api.md.
func accessTable(t *testing.T, doc, heading string) []docRow {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/api.md has no %q", heading)
	}
	var rows []docRow
	inTable := false
	for _, line := range strings.Split(doc[i+len(heading)+2:], "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		if strings.HasPrefix(cells[0], "---") || cells[0] == "scope" || cells[0] == "operation" {
			continue
		}
		row := docRow{first: cells[0], cells: cells[1:]}
		for _, c := range cells {
			row.patterns = append(row.patterns, patternsOf(c)...)
		}
		rows = append(rows, row)
	}
	return rows
}

// bestRow returns the row whose pattern matches op most specifically, and that pattern.
func bestRow(rows []docRow, op operation) (*docRow, *routePattern) {
	var row *docRow
	var pat *routePattern
	for i := range rows {
		for j := range rows[i].patterns {
			p := &rows[i].patterns[j]
			if p.matches(op) && (pat == nil || p.specificity() > pat.specificity()) {
				row, pat = &rows[i], p
			}
		}
	}
	return row, pat
}

// checkAccessDocs holds docs/api.md's access tables to the route table: the scope each
// route of the scopes table needs, the routes calls:runtime allows, and the weakest role
// of each route the roles table names.
func checkAccessDocs(t *testing.T, ops []operation) {
	raw, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)

	var scopeRows, runtimeRows []docRow
	for _, r := range accessTable(t, doc, "### Scoped API keys") {
		if strings.Contains(r.first, data.ScopeCallsRuntime) {
			runtimeRows = append(runtimeRows, r)
		} else {
			scopeRows = append(scopeRows, r)
		}
	}
	used := map[*routePattern]bool{}
	for _, op := range ops {
		row, pat := bestRow(scopeRows, op)
		if pat != nil {
			used[pat] = true
		}
		switch {
		case op.req.AnyKey:
		case row == nil && op.req.Scope != "":
			t.Errorf("docs/api.md: %s %s needs %s, which no row of the scopes table names", op.method, op.path, op.req.Scope)
		case row != nil && (op.req.Scope == "" || !strings.Contains(row.first, "`"+op.req.Scope+"`")):
			t.Errorf("docs/api.md: the scopes table gives %s %s to %s; the route needs scope %q", op.method, op.path, row.first, op.req.Scope)
		}
	}
	for _, r := range scopeRows {
		for i := range r.patterns {
			if !used[&r.patterns[i]] {
				t.Errorf("docs/api.md: the scopes table names %v under %s, which is no route's best match", r.patterns[i], r.first)
			}
		}
	}
	var documented, runtime []string
	for _, r := range runtimeRows {
		for _, p := range r.patterns {
			documented = append(documented, p.method+" "+p.path)
		}
	}
	for _, op := range ops {
		if op.req.Runtime {
			runtime = append(runtime, op.method+" "+op.path)
		}
	}
	slices.Sort(documented)
	slices.Sort(runtime)
	if len(runtimeRows) != 1 || !slices.Equal(documented, runtime) {
		t.Errorf("docs/api.md: calls:runtime allows %v; the routes allow %v", documented, runtime)
	}

	roleRows := accessTable(t, doc, "## Workspaces, roles and modules")
	roles := []string{data.RoleOwner, data.RoleAdmin, data.RoleDeveloper, data.RoleMember}
	checked := 0
	for _, op := range ops {
		row, _ := bestRow(roleRows, op)
		if row == nil {
			continue
		}
		weakest := ""
		for i, cell := range row.cells[:len(roles)] {
			if strings.HasPrefix(cell, "yes") {
				weakest = roles[i]
			}
		}
		if weakest == data.RoleMember {
			weakest = "" // any member
		}
		if op.req.MinRole != weakest {
			t.Errorf("docs/api.md: the roles table gives %s %s to %q and up; the route needs %q", op.method, op.path, weakest, op.req.MinRole)
		}
		checked++
	}
	if checked < 15 {
		t.Errorf("the roles table names only %d routes", checked)
	}
	checkAllAgentsDocs(t, doc, ops)
}

// checkAllAgentsDocs holds docs/api.md's tables of the routes that need a token seeing
// every agent, and of those that need one reading every event, to the route table: a
// route is named in one exactly when it needs all_agents (every_module), and every
// pattern there names such a route.
func checkAllAgentsDocs(t *testing.T, doc string, ops []operation) {
	checkNeedTable(t, doc, ops, "### Routes that need a token that sees every agent", "every agent", func(r requires) bool { return r.AllAgents })
	checkNeedTable(t, doc, ops, "### Routes that need a token that reads every event", "every event", func(r requires) bool { return r.EveryModule })
}

// checkNeedTable holds the table under heading to the routes whose requirement needs.
func checkNeedTable(t *testing.T, doc string, ops []operation, heading, what string, needs func(requires) bool) {
	rows := accessTable(t, doc, heading)
	used := map[*routePattern]bool{}
	for _, op := range ops {
		row, pat := bestRow(rows, op)
		switch {
		case row == nil && needs(op.req):
			t.Errorf("docs/api.md: %s %s needs a token that reads %s, which the table does not name", op.method, op.path, what)
		case row != nil && !needs(op.req):
			t.Errorf("docs/api.md: the table of routes needing %s names %s %s (under %s), which does not need it", what, op.method, op.path, row.first)
		case row != nil:
			used[pat] = true
		}
	}
	for _, r := range rows {
		for i := range r.patterns {
			if !used[&r.patterns[i]] {
				t.Errorf("docs/api.md: the table of routes needing %s names %v under %s, which is no route's", what, r.patterns[i], r.first)
			}
		}
	}
}
