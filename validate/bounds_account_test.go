package validate

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
)

const testDomain = "@example.com"

// emailOf is an address of n characters, its local part of two-byte characters.
func emailOf(n int) string { return chars(n-len(testDomain)) + testDomain }

// webhookURLOf is a webhook URL of n characters, its path of two-byte characters.
func webhookURLOf(n int) string {
	const base = "https://example.com/"
	return base + chars(n-len(base))
}

func TestAccountBounds(t *testing.T) {
	user := func(change func(*data.UserCreate)) error {
		in := data.UserCreate{Name: "A", Email: "a@example.com", Password: "12345678"}
		change(&in)
		return UserCreate(in)
	}
	checkBounds(t, []bound{
		{"MaxNameLen user", "name", func(past bool) error {
			return user(func(u *data.UserCreate) { u.Name = chars(upTo(MaxNameLen, past)) })
		}},
		{"MaxNameLen profile", "name", func(past bool) error {
			return UserUpdate(data.UserUpdate{Name: data.Some(chars(upTo(MaxNameLen, past)))})
		}},
		{"MaxNameLen workspace", "name", func(past bool) error {
			return WorkspaceCreate(data.WorkspaceCreate{Name: chars(upTo(MaxNameLen, past))})
		}},
		{"MaxNameLen workspace update", "name", func(past bool) error {
			return WorkspaceUpdate(data.WorkspaceUpdate{Name: data.Some(chars(upTo(MaxNameLen, past)))}, testCatalog)
		}},
		{"MaxNameLen api key", "name", func(past bool) error {
			_, err := APIKeyCreate(data.APIKeyCreate{Name: chars(upTo(MaxNameLen, past))}, testNow)
			return err
		}},
		{"MaxEmailLen user", "email", func(past bool) error {
			return user(func(u *data.UserCreate) { u.Email = emailOf(upTo(MaxEmailLen, past)) })
		}},
		{"MaxEmailLen profile", "email", func(past bool) error {
			return UserUpdate(data.UserUpdate{Email: data.Some(emailOf(upTo(MaxEmailLen, past)))})
		}},
		{"MaxEmailLen member", "email", func(past bool) error {
			return WorkspaceUserAdd(data.WorkspaceUserAdd{Email: emailOf(upTo(MaxEmailLen, past)), Role: data.RoleMember})
		}},
		{"MinPasswordLen", "password", func(past bool) error {
			return user(func(u *data.UserCreate) { u.Password = chars(downTo(MinPasswordLen, past)) })
		}},
		{"MinPasswordLen reset", "password", func(past bool) error {
			return NewPassword(chars(downTo(MinPasswordLen, past)))
		}},
		{"MaxPasswordBytes", "password", func(past bool) error {
			return user(func(u *data.UserCreate) { u.Password = strings.Repeat("a", upTo(MaxPasswordBytes, past)) })
		}},
		// Bytes, as bcrypt reads them: half as many two-byte characters reach the bound.
		{"MaxPasswordBytes two-byte characters", "password", func(past bool) error {
			pw := chars(MaxPasswordBytes / 2)
			if past {
				pw += "a"
			}
			return NewPassword(pw)
		}},
		{"MaxDescriptionLen workspace", "description", func(past bool) error {
			return WorkspaceCreate(data.WorkspaceCreate{Name: "W", Description: chars(upTo(MaxDescriptionLen, past))})
		}},
		{"MaxDescriptionLen workspace update", "description", func(past bool) error {
			return WorkspaceUpdate(data.WorkspaceUpdate{Description: data.Some(chars(upTo(MaxDescriptionLen, past)))}, testCatalog)
		}},
		{"MaxIDListItems api key", "agent_ids", func(past bool) error {
			_, err := APIKeyCreate(data.APIKeyCreate{Name: "k", AgentIDs: agentIDList(upTo(MaxIDListItems, past))}, testNow)
			return err
		}},
		{"MaxIDListItems member", "agent_ids", func(past bool) error {
			return WorkspaceUserAdd(data.WorkspaceUserAdd{ID: "usr_01JD6AAAAAAAAAAAAAAAAAAAAA", Role: data.RoleDeveloper,
				AgentIDs: data.Some(agentIDList(upTo(MaxIDListItems, past)))})
		}},
		{"MaxIDListItems member update", "agent_ids", func(past bool) error {
			return WorkspaceUserUpdate(data.WorkspaceUserUpdate{AgentIDs: data.Some(agentIDList(upTo(MaxIDListItems, past)))})
		}},
	})
}

// TestEmailCheckedWhateverItsBytes: an address within MaxEmailLen characters but longer
// in bytes is still checked for its form. The length was counted in bytes and then
// reported by a rule counting characters, which found nothing, so such a value skipped the
// address check and was stored as an email.
func TestEmailCheckedWhateverItsBytes(t *testing.T) {
	notAnAddress := chars(MaxEmailLen/2 + 1) // within MaxEmailLen characters, past it in bytes, no @
	if len(notAnAddress) <= MaxEmailLen {
		t.Fatalf("%d bytes: the value must be longer than the bound in bytes", len(notAnAddress))
	}
	expectPaths(t, "user", UserCreate(data.UserCreate{Name: "A", Email: notAnAddress, Password: "12345678"}), "email")
	expectPaths(t, "profile", UserUpdate(data.UserUpdate{Email: data.Some(notAnAddress)}), "email")
	expectPaths(t, "member", WorkspaceUserAdd(data.WorkspaceUserAdd{Email: notAnAddress, Role: data.RoleMember}), "email")
}

func TestWebhookBounds(t *testing.T) {
	hook := func(change func(*data.WebhookCreate)) error {
		in := data.WebhookCreate{URL: "https://example.com/hook", Events: []string{data.WebhookAllEvents}}
		change(&in)
		return WebhookCreate(in, netguard.CheckURL)
	}
	checkBounds(t, []bound{
		// Characters, as the document's maxLength and the message say, through the
		// outbound guard too (import checks webhooks with it alone).
		{"MaxWebhookURLLen", "url", func(past bool) error {
			return hook(func(w *data.WebhookCreate) { w.URL = webhookURLOf(upTo(MaxWebhookURLLen, past)) })
		}},
		{"MaxWebhookURLLen update", "url", func(past bool) error {
			return WebhookUpdate(data.WebhookUpdate{URL: data.Some(webhookURLOf(upTo(MaxWebhookURLLen, past)))}, netguard.CheckURL)
		}},
		{"MaxDescriptionLen webhook", "description", func(past bool) error {
			return hook(func(w *data.WebhookCreate) { w.Description = chars(upTo(MaxDescriptionLen, past)) })
		}},
		{"MaxDescriptionLen webhook update", "description", func(past bool) error {
			return WebhookUpdate(data.WebhookUpdate{Description: data.Some(chars(upTo(MaxDescriptionLen, past)))}, netguard.CheckURL)
		}},
	})
}

// TestWebhookEventsBound: there are fewer event types than MaxWebhookEvents, so a list at
// the bound can only fail on its repeats, each at its own index; one past it fails on the
// list as a whole too.
func TestWebhookEventsBound(t *testing.T) {
	if len(data.EventTypes) >= MaxWebhookEvents {
		t.Fatalf("%d event types: a list of MaxWebhookEvents distinct types is possible; test it valid", len(data.EventTypes))
	}
	list := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = data.EventTypes[i%len(data.EventTypes)]
		}
		return out
	}
	for _, past := range []bool{false, true} {
		faults := fields(WebhookCreate(data.WebhookCreate{URL: "https://example.com/hook", Events: list(upTo(MaxWebhookEvents, past))}, netguard.CheckURL))
		if _, whole := faults["events"]; whole != past {
			t.Errorf("past %v: a fault on events is %v, want %v", past, whole, past)
		}
		if _, first := faults["events.0"]; first {
			t.Errorf("past %v: the first event is a fault: %v", past, faults["events.0"])
		}
		last := Index("events", upTo(MaxWebhookEvents, past)-1)
		if _, repeat := faults[last]; !repeat {
			t.Errorf("past %v: the repeated event %s is no fault", past, last)
		}
	}
	distinct := append([]string(nil), data.EventTypes...)
	if err := WebhookCreate(data.WebhookCreate{URL: "https://example.com/hook", Events: distinct}, netguard.CheckURL); err != nil {
		t.Errorf("every event type once: %v", faultsOf(err))
	}
}

func TestNumberBounds(t *testing.T) {
	checkBounds(t, []bound{
		{"MaxNicknameLen", "nickname", func(past bool) error {
			return NumberCreate(data.NumberCreate{PhoneNumber: "+14155550123", Provider: data.NumberProviders[0], Nickname: chars(upTo(MaxNicknameLen, past))})
		}},
		{"MaxNicknameLen update", "nickname", func(past bool) error {
			return NumberUpdate(data.NumberUpdate{Nickname: data.Some(chars(upTo(MaxNicknameLen, past)))})
		}},
		{"MaxNicknameLen search", "q", func(past bool) error {
			return NumberFilter(data.NumberFilter{Q: chars(upTo(MaxNicknameLen, past))})
		}},
	})
}
