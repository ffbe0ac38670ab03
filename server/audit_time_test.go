package server_test

import "testing"

// The audit log reads from and to like every other list: an offset that carries the time
// out of RFC 3339's years once in UTC is refused, not accepted as a bound.
func TestAuditLogRefusesOutOfRangeTimes(t *testing.T) {
	e := newEnv(t)
	for _, q := range []string{"from=0000-01-01T00:00:00%2B01:00", "to=not-a-time", "from=9999-12-31T23:00:00-02:00"} {
		r := e.do("GET", "/api/v1/audit-log?"+q, e.Owner.Token, nil)
		expect(t, r, 422)
	}
	expect(t, e.do("GET", "/api/v1/audit-log?from=2026-01-01T00:00:00Z", e.Owner.Token, nil), 200)
}
