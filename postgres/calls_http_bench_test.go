package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkCallPagesHTTP is BenchmarkCallPages through the whole HTTP stack: GET
// /api/v1/calls?per_page=100, the newest page and one 99% deep, on the same
// VOICEAPI_BENCH_CALLS calls, served by a real server over the engine with an API key
// of a member of their workspace. The two pages alternate, each timed, so that the
// machine's load weighs on both alike.
func BenchmarkCallPagesHTTP(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	svc := cli.NewServices(benchDB)
	u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: "Bench", Email: "bench-http@example.com", Password: "password-123456", IsAdmin: true})
	if err != nil {
		b.Fatal(err)
	}
	// The calls' workspace was loaded without its record: add it and the membership.
	err = benchDB.Update(ctx, func(tx service.Tx) error {
		now := data.NewTime(time.Now())
		if w, err := tx.Workspace(benchWS); err != nil || w != nil {
			return err
		}
		if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: benchWS, Name: "Bench", CreatedAt: now, UpdatedAt: now}}); err != nil {
			return err
		}
		return tx.PutMember(&data.MemberRecord{UserID: u.ID, WorkspaceID: benchWS, Role: data.RoleOwner, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		b.Fatal(err)
	}
	_, token, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, benchWS, data.APIKeyCreate{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(cli.NewServerOn(benchDB, svc, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	defer hs.Close()
	deep := postgres.CallsCursor(benchDB, benchWS, benchIDs[len(benchIDs)*99/100-100])
	get := func(query string) {
		req, _ := http.NewRequest("GET", hs.URL+"/api/v1/calls?per_page=100"+query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hs.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n < 10_000 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
	get("") // warm the token cache and the connections
	var first, deeper time.Duration
	for b.Loop() {
		start := time.Now()
		get("")
		mid := time.Now()
		get("&cursor=" + url.QueryEscape(deep))
		first, deeper = first+mid.Sub(start), deeper+time.Since(mid)
	}
	b.ReportMetric(float64(first.Microseconds())/float64(b.N), "first-µs/page")
	b.ReportMetric(float64(deeper.Microseconds())/float64(b.N), "deep-µs/page")
	b.ReportMetric(float64(deeper)/float64(first), "deep/first")
}
