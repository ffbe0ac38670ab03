package bolt

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// fuzzCursorKey replaces the random cursor key, so that cursors in the seed corpus stay
// valid from run to run.
var fuzzCursorKey = bytes.Repeat([]byte{0x5a}, 32)

// FuzzDecodeCursor: decodeCursor never panics on any string, accepts only the exact
// strings encodeCursor produced for that list, and every cursor it encodes decodes back
// to the same position, for its own list only.
func FuzzDecodeCursor(f *testing.F) {
	db := openInternal(f, &clock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)})
	db.cursorKey = fuzzCursorKey
	binding := string(bucketAgentsByWS) + "\x00ws_01JD6000000000000000000000"
	foreign := string(bucketAgentsByWS) + "\x00ws_01JD6000000000000000000001"
	for _, id := range []string{"agt_01JD6000000000000000000000", "call_01JD6ZZZZZZZZZZZZZZZZZZZZZ", ""} {
		f.Add(*db.encodeCursor(older, binding, id), id)
		f.Add(*db.encodeCursor(newer, binding, id), id)
	}
	f.Fuzz(func(t *testing.T, cursor, id string) {
		if dir, got, ok := db.decodeCursor(cursor, binding); ok {
			if again := *db.encodeCursor(dir, binding, got); again != cursor {
				t.Fatalf("decodeCursor accepted %q, which is not what it encodes for that position (%q)", cursor, again)
			}
			if _, _, ok := db.decodeCursor(cursor, foreign); ok {
				t.Fatalf("cursor %q decodes for another list too", cursor)
			}
		}
		for _, dir := range []byte{older, newer} {
			c := *db.encodeCursor(dir, binding, id)
			d, got, ok := db.decodeCursor(c, binding)
			if dir == older && id == "" {
				// "Older than nothing" is never produced: the first page has no cursor.
				if ok {
					t.Fatalf("a next-page cursor with an empty id decodes")
				}
				continue
			}
			if !ok || d != dir || got != id {
				t.Fatalf("cursor %q for (%c, %q) decodes as (%c, %q, %v)", c, dir, id, d, got, ok)
			}
			if _, _, ok := db.decodeCursor(c, foreign); ok {
				t.Fatalf("cursor %q decodes for another list", c)
			}
		}
	})
}

// FuzzAuthenticate: Authenticate never panics, refuses with unauthenticated, and accepts
// only the exact token string it issued and has not revoked or seen expire. In the input,
// {live}, {revoked}, {expired}, {id} and {secret} stand for the tokens issued at setup
// (they are random), so the fuzzer can mutate around real tokens.
func FuzzAuthenticate(f *testing.F) {
	clk := &clock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	db := openInternal(f, clk)
	ctx := context.Background()
	u, err := db.CreateUser(ctx, data.UserCreate{Name: "Fuzz", Email: "fuzz@example.com", Password: "password123"})
	if err != nil {
		f.Fatal(err)
	}
	issue := func(exp *string) (*data.APIKey, string) {
		k, tok, err := db.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "k", Expiration: exp})
		if err != nil {
			f.Fatal(err)
		}
		return k, tok
	}
	_, live := issue(nil)
	revokedKey, revoked := issue(nil)
	tomorrow := "2026-11-22"
	_, expired := issue(&tomorrow)
	owner := data.WithPrincipal(ctx, &data.Principal{UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, CurrentWorkspaceID: u.PersonalWorkspaceID, Role: data.RoleOwner, Modules: data.Modules})
	if err := db.DeleteAPIKey(owner, revokedKey.ID); err != nil {
		f.Fatal(err)
	}
	clk.t = clk.t.Add(48 * time.Hour)
	id, secret, _ := strings.Cut(live, "|")
	expand := strings.NewReplacer("{live}", live, "{revoked}", revoked, "{expired}", expired, "{id}", id, "{secret}", secret)

	for _, s := range []string{"{live}", "{revoked}", "{expired}", "{id}|{secret}", "{id}|{secret}x", "{id}|", "|{secret}", "Bearer {live}", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		token := expand.Replace(in)
		p, err := db.Authenticate(ctx, token)
		if err != nil {
			if data.ErrorCode(err) != data.EUNAUTHORIZED {
				t.Fatalf("Authenticate(%q): %v, want unauthenticated", token, err)
			}
			if token == live {
				t.Fatalf("the live token is refused: %v", err)
			}
			return
		}
		if token != live {
			t.Fatalf("Authenticate accepted %q, a string it never issued (the live token is %q)", token, live)
		}
		if p.UserID != u.ID || p.WorkspaceID != u.PersonalWorkspaceID {
			t.Fatalf("the live token authenticates as %+v", p)
		}
	})
}
