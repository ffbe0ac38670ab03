package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestBackupOfferedWhereTaken: the instance page offers the backup download exactly when
// the API takes one (bbolt); on PostgreSQL, where GET /api/v1/admin/backup answers 404,
// it names the database's own tools instead of a button that would lead to that 404.
// Run on both engines (VOICEAPI_TEST_BACKEND=postgres).
func TestBackupOfferedWhereTaken(t *testing.T) {
	e := testenv.Start(t)
	taken := e.Do(nil, "GET", "/api/v1/admin/backup", e.Owner.Token, nil).Status
	if taken != http.StatusOK && taken != http.StatusNotFound {
		t.Fatalf("GET /api/v1/admin/backup: %d", taken)
	}
	s := e.SignIn(e.Owner, "")
	res := e.Do(s.Client, "GET", "/users", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /users: %d %s", res.Status, res.Body)
	}
	page := string(res.Body)
	offered := strings.Contains(page, `action="/api/v1/admin/backup"`)
	if offered != (taken == http.StatusOK) {
		t.Errorf("the backup download offered %v, while the API answers %d", offered, taken)
	}
	if taken == http.StatusNotFound && !strings.Contains(page, "pg_dump") {
		t.Errorf("the instance page does not say how to back a PostgreSQL server up:\n%s", page)
	}
}

// TestAccountNamesWhatTheInstancePageOffers: an instance administrator's account page links
// to the instance page by what it holds: "users and backups" only where the server takes
// backups (bbolt), "users" on PostgreSQL. Run on both engines.
func TestAccountNamesWhatTheInstancePageOffers(t *testing.T) {
	e := testenv.Start(t)
	taken := e.Do(nil, "GET", "/api/v1/admin/backup", e.Owner.Token, nil).Status
	s := e.SignIn(e.Owner, "")
	res := e.Do(s.Client, "GET", "/account", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /account: %d %s", res.Status, res.Body)
	}
	page := string(res.Body)
	if !strings.Contains(page, `href="/users"`) {
		t.Fatalf("the account page of an instance administrator has no link to the instance page:\n%s", page)
	}
	if says := strings.Contains(page, "backups"); says != (taken == http.StatusOK) {
		t.Errorf("the account page mentions backups %v, while GET /api/v1/admin/backup answers %d", says, taken)
	}
}
