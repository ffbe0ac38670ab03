package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// `user reset-password` prints a generated password alone on stdout, or takes one line
// of stdin; the new password signs in, the old one and the old login sessions do not.
func TestUserResetPassword(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := run(t, "", "user", "create", "--data", dir, "--email", "owner@example.com", "--name", "Owner", "--password", "forgotten-one", "--admin"); err != nil {
		t.Fatal(err)
	}
	db := openDir(t, dir)
	_, login, err := NewServices(db).Auth.Login(context.Background(), "owner@example.com", "forgotten-one", nil)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, err := run(t, "", "user", "reset-password", "--data", dir, "--email", "Owner@Example.com")
	if err != nil {
		t.Fatal(err)
	}
	generated := strings.TrimSpace(out)
	if len(generated) < 20 || strings.ContainsAny(generated, " \n") || !strings.Contains(errOut, "shown once") {
		t.Fatalf("stdout %q, stderr %q: want the password alone on stdout", out, errOut)
	}
	db = openDir(t, dir)
	svc := NewServices(db)
	if _, _, err := svc.Auth.Login(context.Background(), "owner@example.com", generated, nil); err != nil {
		t.Errorf("the printed password does not sign in: %v", err)
	}
	if _, _, err := svc.Auth.Login(context.Background(), "owner@example.com", "forgotten-one", nil); err == nil {
		t.Error("the old password still signs in")
	}
	if _, err := svc.Auth.Authenticate(context.Background(), login); data.ErrorCode(err) != data.EUNAUTHORIZED {
		t.Errorf("a login session from before the reset: %v", err)
	}
	db.Close()

	// From stdin: the line is the password.
	if out, _, err := run(t, "chosen-by-me\n", "user", "reset-password", "--data", dir, "--email", "owner@example.com", "--password-stdin"); err != nil || !strings.Contains(out, "owner@example.com") {
		t.Fatalf("stdin reset: %q, %v", out, err)
	}
	db = openDir(t, dir)
	if _, _, err := NewServices(db).Auth.Login(context.Background(), "owner@example.com", "chosen-by-me", nil); err != nil {
		t.Errorf("the stdin password does not sign in: %v", err)
	}
	db.Close()

	// Refusals name what is wrong and change nothing.
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"no email", "", []string{"--data", dir}, "--email"},
		{"unknown email", "", []string{"--data", dir, "--email", "nobody@example.com"}, "no user with email"},
		{"empty stdin", "", []string{"--data", dir, "--email", "owner@example.com", "--password-stdin"}, "empty password"},
		{"short stdin", "1234567\n", []string{"--data", dir, "--email", "owner@example.com", "--password-stdin"}, "at least 8"},
	} {
		_, _, err := run(t, tc.stdin, append([]string{"user", "reset-password"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	db = openDir(t, dir)
	defer db.Close()
	if _, _, err := NewServices(db).Auth.Login(context.Background(), "owner@example.com", "chosen-by-me", nil); err != nil {
		t.Errorf("a refused reset changed the password: %v", err)
	}
}
