package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/webhook"
)

// BenchmarkDeliveries measures deliveries per second from the outbox to a local httptest
// receiver, fsync on (as in production): b.N events are committed first, then the clock
// runs from the dispatcher's start until the receiver has all of them.
//
//	go test ./server -run '^$' -bench Deliveries -benchtime 5000x
func BenchmarkDeliveries(b *testing.B) {
	db, err := bolt.Open(b.TempDir(), bolt.Options{PasswordCost: bcrypt.MinCost, SecretKey: bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var got atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer rc.Close()
	ctx := context.Background()
	svc := cli.NewServices(db)
	u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: "B", Email: "b@example.com", Password: "password123"})
	if err != nil {
		b.Fatal(err)
	}
	as := data.WithPrincipal(ctx, &data.Principal{UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, Role: data.RoleOwner})
	if _, _, err := svc.Webhooks.CreateWebhook(as, data.WebhookCreate{URL: rc.URL, Events: []string{"*"}}); err != nil {
		b.Fatal(err)
	}
	// Commit b.N events from 32 writers, so that bbolt's group commit keeps setup short.
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += 32 {
				if _, err := cli.NewServices(db).Workspaces.UpdateWorkspace(as, u.PersonalWorkspaceID, data.WorkspaceUpdate{Name: data.Some(fmt.Sprint("n", i))}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()

	d := webhook.NewDispatcher(svc.Deliveries, webhook.Config{AllowPrivate: true, Workers: 32, Logger: slog.New(slog.DiscardHandler)})
	db.SetEventHook(d.Wake)
	b.ResetTimer()
	start := time.Now()
	d.Start(ctx)
	for got.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	db.SetEventHook(nil)
	d.Stop(ctx)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
}
