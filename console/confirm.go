package console

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

// confirmation is a destructive action's confirmation step (docs/dashboard.md, "Shared
// patterns"). The action's link ("Delete…") opens a page at the action's own URL that
// names what the action does, what is lost and what stays; its form posts back to that
// URL, which acts. Nothing destructive happens on one click, and nothing needs script.
type confirmation struct {
	// Title is the question: "Delete the webhook https://example.com/hook?"
	Title string
	// Lost and Kept say what goes and what stays, a sentence each.
	Lost, Kept []string
	// Button is the action in words: "Delete webhook".
	Button string
	// Cancel is where the Cancel link leads: the record's page.
	Cancel string
	// Crumb names the section the record is in, for the breadcrumb: "Webhooks".
	Crumb, CrumbHref string
	// TypeName, when set, must be typed into the form to confirm (the deletion of a whole
	// workspace).
	TypeName string
	// Password asks for the user's password (an action after which the console signs in
	// again).
	Password bool
	// Undoable says the action can be reversed (a restore): no "cannot be undone" line.
	Undoable bool
	// Refused says the API refuses the action whatever is confirmed (its refusal is the
	// page's error): the page shows why and a way back, and offers no button.
	Refused bool
	// Need is what the API asks of the user for the action (its route's requirement):
	// without it the page is the 403 its button would lead to, not a confirmation.
	Need *data.Requirement
}

// needOf is r as a confirmation's Need.
func needOf(r data.Requirement) *data.Requirement { return &r }

// confirmPage renders c for the action at r's path; status and fail carry a refusal
// when the page is shown again after its POST failed.
func (h *Handler) confirmPage(w http.ResponseWriter, r *http.Request, active string, c confirmation, status int, fail *apiError) {
	if c.Need != nil {
		if err := data.PrincipalFrom(r.Context()).Allows(*c.Need); err != nil {
			h.fail(w, r, &apiError{Status: http.StatusForbidden, Code: data.ErrorCode(err), Message: data.ErrorMessage(err)})
			return
		}
	}
	h.render(w, r, status, "confirm", &view{Title: c.Title, Active: active, Err: fail, D: map[string]any{
		"C": c, "Action": r.URL.Path,
	}})
}

// refusedByAccess answers a confirmation's page with the refusal its button would meet
// on a record the user's role may change but the record's access forbids (a read's
// access.write, the service's own check, false: an agent outside the user's agent_ids
// would be acted for), whose refusal is denied (the API's message, data's). It reports
// whether it answered. Without the role's right, confirmPage's Need answers instead, as
// the API's route refuses first.
func (h *Handler) refusedByAccess(w http.ResponseWriter, r *http.Request, need data.Requirement, writable bool, denied string) bool {
	if writable || data.PrincipalFrom(r.Context()).Allows(need) != nil {
		return false
	}
	h.fail(w, r, &apiError{Status: http.StatusForbidden, Code: data.EFORBIDDEN, Message: denied})
	return true
}

// typedNameMatches checks the name a confirmation asked to be typed; the comparison is
// the console's own safeguard against a slip of the hand, not a rule of the API.
func typedNameMatches(r *http.Request, want string) bool {
	return want == "" || r.PostFormValue("confirm_name") == want
}
