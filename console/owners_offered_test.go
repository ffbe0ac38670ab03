package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestAdminIsNotOfferedOwners: only an owner may grant the owner role or change or
// remove an owner (the API's 403). An admin's members list offered the owner's row a
// Save and a Remove, and every role select the owner role; it offers neither, and the
// owner's removal opened by its address says why. An owner is offered them all.
func TestAdminIsNotOfferedOwners(t *testing.T) {
	e := testenv.Start(t)
	admin, dev := e.NewUser("ada@example.com", false), e.NewUser("dev@example.com", false)
	addMember(t, e, admin, map[string]any{"role": "admin"})
	addMember(t, e, dev, map[string]any{"role": "developer"})
	ownerForm := `action="/workspace/members/` + e.Owner.ID + `"`
	ownerRemove := `href="/workspace/members/` + e.Owner.ID + `/remove"`
	for _, c := range []struct {
		who     *testenv.User
		offered bool
	}{{admin, false}, {e.Owner, true}} {
		s := e.SignIn(c.who, e.Owner.WorkspaceID)
		res := e.Do(s.Client, "GET", "/workspace", "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: /workspace: %d", c.who.Email, res.Status)
		}
		page := string(res.Body)
		for _, offer := range []string{ownerForm, ownerRemove, `<option value="owner"`} {
			if strings.Contains(page, offer) != c.offered {
				t.Errorf("%s: /workspace offers %s: %v, want %v", c.who.Email, offer, !c.offered, c.offered)
			}
		}
		if !strings.Contains(page, `action="/workspace/members/`+dev.ID+`"`) {
			t.Errorf("%s: /workspace offers no change of the developer", c.who.Email)
		}
		confirm := e.Do(s.Client, "GET", "/workspace/members/"+e.Owner.ID+"/remove", "", nil)
		if want := map[bool]int{false: http.StatusForbidden, true: http.StatusOK}[c.offered]; confirm.Status != want {
			t.Errorf("%s: the owner's removal confirmation: %d, want %d", c.who.Email, confirm.Status, want)
		}
		if !c.offered && !strings.Contains(string(confirm.Body), "Only an owner can grant, change or remove an owner.") {
			t.Errorf("%s: the owner's removal confirmation does not say why:\n%s", c.who.Email, confirm.Body)
		}
	}
}
