package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestCampaignRequiredMembersSayRequired: a member the docs call required and the body
// leaves out is told "is required", as every other required member is, not a format
// fault about an empty value ("The phone number \"\" cannot be read…", "must be an agent
// of this workspace", "must be between 1 and 100").
func TestCampaignRequiredMembersSayRequired(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	cases := []struct {
		name, path string
		token      string
		body       map[string]any
		want       map[string]string
	}{
		{"campaign", "/api/v1/campaigns", e.Owner.Token, map[string]any{"recipients": []map[string]any{{"variables": map[string]any{}}}},
			map[string]string{"agent_id": "The agent_id field is required.", "number_id": "The number_id field is required.",
				"recipients.0.phone_number": "The recipients.0.phone_number field is required."}},
		{"suppression", "/api/v1/suppressions", e.Owner.Token, map[string]any{"reason": "asked"},
			map[string]string{"phone_number": "The phone_number field is required."}},
		{"suppression import", "/api/v1/suppressions/import", e.Owner.Token, map[string]any{"rows": []map[string]any{{"reason": "asked"}}},
			map[string]string{"rows.0.phone_number": "The rows.0.phone_number field is required."}},
		{"claim", "/api/v1/dial-tasks/claim", e.runtime, map[string]any{},
			map[string]string{"max": "The max field is required: the most tasks to lease, 1 to 100."}},
	}
	for _, c := range cases {
		r := e.Do("POST", c.path, c.token, c.body)
		testkit.Expect(t, r, 422)
		for path, msg := range c.want {
			got, _ := r.FieldErrors()[path].([]any)
			if len(got) != 1 || got[0] != msg {
				t.Errorf("%s: %s is told %v, want %q", c.name, path, got, msg)
			}
		}
	}
	// A value given and wrong is still told as such.
	r := e.Do("POST", "/api/v1/dial-tasks/claim", e.runtime, map[string]any{"max": 101})
	testkit.ExpectFields(t, r, "max")
	r = e.Do("POST", "/api/v1/suppressions", e.Owner.Token, map[string]any{"phone_number": "zz"})
	testkit.ExpectFields(t, r, "phone_number")
}
