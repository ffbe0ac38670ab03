package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// A move writes in transactions of a few hundred records. Cut short after the first (the
// command killed, its terminal gone), the database held part of the installation, the
// move run again said only that it "already holds accounts" (as after a move that
// finished), and replicas started on it served that part as if it were all. Now no server
// opens it, and the move run again says the earlier one did not finish.
func TestMoveCutShortLeavesADatabaseNoServerOpens(t *testing.T) {
	dir := t.TempDir()
	url := pgtest.Database(t)
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	src, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// More accounts than one of the move's transactions holds.
	err = src.Update(context.Background(), func(tx service.Tx) error {
		for i := range 700 {
			u := &data.UserRecord{User: data.User{ID: fmt.Sprintf("usr_cut%05d", i), Name: "u", Email: fmt.Sprintf("u%d@example.com", i)}, PasswordHash: []byte("x")}
			if err := tx.PutUser(u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := postgres.Options{URL: url, DataDir: dir, SecretKey: src.Options().SecretKey, PasswordCost: bcrypt.MinCost, Logger: quiet}
	dst, err := postgres.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cut := context.WithCancel(context.Background())
	_, err = service.MoveInstallation(ctx, src, dst, func(string, int) { cut() })
	dst.Close()
	src.Close()
	if err == nil {
		t.Fatal("the move was not cut short")
	}
	var users int
	check, err := postgres.Open(context.Background(), opts)
	if err == nil {
		check.View(context.Background(), func(tx service.Tx) error {
			users, err = tx.CountUsers()
			return err
		})
		check.Close()
		t.Fatalf("a server opened the database of a move cut short (%d of 700 accounts)", users)
	}
	if !errors.Is(err, postgres.ErrMoveUnfinished) {
		t.Fatalf("opening the database of a move cut short: %v, want ErrMoveUnfinished", err)
	}
	if out, err := runMigrate(t, "migrate", "--from-data", dir, "--database-url", url); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("the move again: %v\n%s", err, out)
	}
}
