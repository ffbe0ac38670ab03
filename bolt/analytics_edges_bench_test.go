package bolt

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
)

// BenchmarkCallAnalyticsBusyHour is the default range (the last 30 days, ending now) of a
// workspace whose current hour holds 20,000 calls: the edge hour that
// TestAnalyticsEdgeHourReadsTheSmallerPart bounds (docs/performance.md, "A big
// workspace's walk").
func BenchmarkCallAnalyticsBusyHour(b *testing.B) {
	now := time.Date(2026, 11, 20, 10, 50, 0, 0, time.UTC)
	db, err := Open(b.TempDir(), Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32), Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	u, err := servicesFor(b, db).Users.CreateUser(context.Background(), data.UserCreate{Name: "B", Email: "bench@example.com", Password: "password123"})
	if err != nil {
		b.Fatal(err)
	}
	ws := u.PersonalWorkspaceID
	ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules})
	agents := []string{db.ids.New(data.PrefixAgent), db.ids.New(data.PrefixAgent)}
	if err := bulkInsertCalls(db, ws, agents, []string{db.ids.New(data.PrefixNumber)}, 20_000, now.Truncate(time.Hour), now.Add(-time.Second)); err != nil {
		b.Fatal(err)
	}
	q := data.CallAnalyticsQuery{From: now.Add(-30 * 24 * time.Hour), To: now, Interval: data.IntervalDay}
	for b.Loop() {
		got, err := servicesFor(b, db).Analytics.CallAnalytics(ctx, q)
		if err != nil || got.Totals.Calls != 20_000 {
			b.Fatalf("%v, %+v", err, got)
		}
	}
}
