package service_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/validate"
)

// keyBoundWorld is a database on a stepped clock with one user.
func keyBoundWorld(t *testing.T) (*testkit.Env, *steppedClock, *data.User) {
	t.Helper()
	clock := newSteppedClock()
	e := testkit.New(t, func(o *bolt.Options) { o.Now = clock.now })
	return e, clock, e.User(t, "keys@example.com")
}

// createKeys makes n API keys for u in workspaceID, expiring on expiration ("" for never).
func createKeys(t *testing.T, e *testkit.Env, u *data.User, workspaceID string, n int, expiration string) []*data.APIKey {
	t.Helper()
	var keys []*data.APIKey
	for i := range n {
		in := data.APIKeyCreate{Name: "k" + strconv.Itoa(i)}
		if expiration != "" {
			in.Expiration = &expiration
		}
		k, _, err := e.Svc.Auth.CreateAPIKeyFor(context.Background(), u.ID, workspaceID, in)
		if err != nil {
			t.Fatalf("key %d of %d: %v", i+1, n, err)
		}
		keys = append(keys, k)
	}
	return keys
}

// listedKeys counts u's API keys as the list shows them.
func listedKeys(t *testing.T, e *testkit.Env, u *data.User) int {
	t.Helper()
	n := 0
	req := data.PageRequest{PerPage: 100}
	for {
		keys, page, err := e.Svc.Auth.ListAPIKeys(testkit.As(u), req)
		if err != nil {
			t.Fatal(err)
		}
		n += len(keys)
		if page.NextCursor == nil {
			return n
		}
		req.Cursor = *page.NextCursor
	}
}

// checkKeyRefused checks err is the bound's 409 naming it, and that u still has want keys.
func checkKeyRefused(t *testing.T, e *testkit.Env, u *data.User, err error, want int) {
	t.Helper()
	if data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), strconv.Itoa(validate.MaxLiveAPIKeys)+" API keys") {
		t.Errorf("a key past the bound: %v, want %s naming the bound (%d)", err, data.ECONFLICT, validate.MaxLiveAPIKeys)
	}
	if n := listedKeys(t, e, u); n != want {
		t.Errorf("%d keys listed after the refusal, want %d", n, want)
	}
}

// TestAPIKeyBound: a user holds at most MaxLiveAPIKeys live API keys in a workspace: the
// one reaching the bound is made, the one past it refused (409 naming it, nothing stored);
// login tokens, expired keys and keys of another workspace do not count; a delete frees
// a slot.
func TestAPIKeyBound(t *testing.T) {
	e, clock, u := keyBoundWorld(t)
	ctx := context.Background()
	ws := u.PersonalWorkspaceID
	for range 3 {
		if _, _, err := e.Svc.Auth.Login(ctx, u.Email, "password-"+u.Email, nil); err != nil {
			t.Fatal(err)
		}
	}
	other, err := e.Svc.Workspaces.CreateWorkspace(testkit.As(u), data.WorkspaceCreate{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	createKeys(t, e, u, other.ID, 2, "")
	tomorrow := clock.now().Add(24 * time.Hour).Format("2006-01-02")
	createKeys(t, e, u, ws, 2, tomorrow)
	keys := createKeys(t, e, u, ws, validate.MaxLiveAPIKeys-2, "") // the last one reaches the bound
	_, _, err = e.Svc.Auth.CreateAPIKeyFor(ctx, u.ID, ws, data.APIKeyCreate{Name: "past"})
	checkKeyRefused(t, e, u, err, validate.MaxLiveAPIKeys+2)

	// Two keys expire: two slots, and no third.
	clock.advance(2 * 24 * time.Hour)
	createKeys(t, e, u, ws, 2, "")
	_, _, err = e.Svc.Auth.CreateAPIKeyFor(ctx, u.ID, ws, data.APIKeyCreate{Name: "past"})
	checkKeyRefused(t, e, u, err, validate.MaxLiveAPIKeys+4)

	// A delete frees a slot.
	if err := e.Svc.Auth.DeleteAPIKey(testkit.As(u), keys[0].ID); err != nil {
		t.Fatal(err)
	}
	createKeys(t, e, u, ws, 1, "")
	_, _, err = e.Svc.Auth.CreateAPIKeyFor(ctx, u.ID, ws, data.APIKeyCreate{Name: "past"})
	checkKeyRefused(t, e, u, err, validate.MaxLiveAPIKeys+4)
}

// TestAPIKeyBoundRace: creates racing for the last slots store exactly the bound (on
// PostgreSQL, VOICEAPI_TEST_BACKEND=postgres, each a SERIALIZABLE transaction).
func TestAPIKeyBoundRace(t *testing.T) {
	e, _, u := keyBoundWorld(t)
	const free, racers = 3, 12
	createKeys(t, e, u, u.PersonalWorkspaceID, validate.MaxLiveAPIKeys-free, "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	made, refused := 0, 0
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := e.Svc.Auth.CreateAPIKeyFor(context.Background(), u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "racer" + strconv.Itoa(i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made++
			case data.ErrorCode(err) == data.ECONFLICT:
				refused++
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if made != free || refused != racers-free {
		t.Errorf("%d made and %d refused, want %d and %d", made, refused, free, racers-free)
	}
	if n := listedKeys(t, e, u); n != validate.MaxLiveAPIKeys {
		t.Errorf("%d keys stored, want %d", n, validate.MaxLiveAPIKeys)
	}
}
