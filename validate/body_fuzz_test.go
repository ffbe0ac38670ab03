package validate_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/bodyfuzz"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/validate"
)

// FuzzNumberBody feeds each body to the number create and update decoders.
func FuzzNumberBody(f *testing.F) {
	bodyfuzz.AddSeeds(f,
		`{"phone_number":"+14155550123","provider":"twilio","nickname":"Front desk","inbound_agent_id":null}`,
		`{"nickname":"x","inbound_agent_id":null,"outbound_agent_id":"agt_01JD6000000000000000000000"}`,
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		bodyfuzz.Check(t, body, func(in *data.NumberCreate, _ map[string]json.RawMessage) error {
			return validate.NumberCreate(*in)
		}, func(in *data.NumberCreate) []byte {
			if !validate.E164(in.PhoneNumber) {
				t.Fatalf("accepted number %q is not E.164", in.PhoneNumber)
			}
			return bodyfuzz.PlainJSON(in)
		})
		bodyfuzz.Check(t, body, func(in *data.NumberUpdate, _ map[string]json.RawMessage) error {
			return validate.NumberUpdate(*in)
		}, func(in *data.NumberUpdate) []byte { return bodyfuzz.PlainJSON(in) })
	})
}

// FuzzCallBody feeds each body to the call register and update decoders, transcripts
// included.
func FuzzCallBody(f *testing.F) {
	bodyfuzz.AddSeeds(f,
		`{"agent_id":"agt_01JD6000000000000000000000","direction":"web"}`,
		`{"agent_id":"agt_01JD6000000000000000000000","direction":"inbound","from_number":"+14155550123","to_number":"sip:desk@example.com","status":"ended","started_at":"2026-01-01T10:00:00Z","ended_at":"2026-01-01T10:01:00Z","duration_ms":60000,"disconnection_reason":"user_hangup","transcript":[{"role":"agent","content":"Hi","start_ms":0}],"variables":{"x":1}}`,
		`{"status":"ongoing","transcript":[{"role":"robot","content":"x","start_ms":-1},null],"recording_url":"ftp://x"}`,
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		bodyfuzz.Check(t, body, func(in *data.CallCreate, _ map[string]json.RawMessage) error {
			return validate.CallCreate(*in)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.CallUpdate, _ map[string]json.RawMessage) error {
			return validate.CallUpdate(*in)
		}, nil)
	})
}

// FuzzWebhookBody feeds each body to the webhook create, update and replay decoders.
func FuzzWebhookBody(f *testing.F) {
	bodyfuzz.AddSeeds(f,
		`{"url":"https://hooks.example.com/voice","events":["call.ended","agent.published"],"description":"CRM"}`,
		`{"events":["*"],"enabled":false}`,
		`{"from":"2026-01-01T00:00:00Z","to":"2026-01-02T00:00:00Z"}`,
		`{"url":"https://user:pw@example.com:99999/","events":["*","*"]}`,
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		bodyfuzz.Check(t, body, func(in *data.WebhookCreate, _ map[string]json.RawMessage) error {
			return validate.WebhookCreate(*in, netguard.CheckURL)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.WebhookUpdate, _ map[string]json.RawMessage) error {
			return validate.WebhookUpdate(*in, netguard.CheckURL)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.WebhookReplay, _ map[string]json.RawMessage) error {
			return validate.WebhookReplay(*in)
		}, nil)
	})
}

// fuzzNow is the clock of API key expirations under the fuzzer.
var fuzzNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// FuzzAccountBody feeds each body to the account decoders: users, login, workspaces,
// workspace members and API keys.
func FuzzAccountBody(f *testing.F) {
	bodyfuzz.AddSeeds(f,
		`{"name":"Ada","email":"ada@example.com","password":"correct horse","is_admin":true}`,
		`{"email":"ada@example.com","password":"x","workspace_id":"ws_01JD6000000000000000000000"}`,
		`{"id":"usr_01JD6000000000000000000000","role":"developer","modules":["agents","analytics"],"agent_ids":["agt_01JD6000000000000000000000"]}`,
		`{"name":"CI key","expiration":"2027-01-31"}`,
		`{"password":"new password","current_password":""}`,
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		bodyfuzz.Check(t, body, func(in *data.UserCreate, _ map[string]json.RawMessage) error { return validate.UserCreate(*in) }, nil)
		bodyfuzz.Check(t, body, func(in *data.UserUpdate, _ map[string]json.RawMessage) error { return validate.UserUpdate(*in) }, nil)
		bodyfuzz.Check(t, body, func(in *data.LoginRequest, _ map[string]json.RawMessage) error {
			return validate.Login(in.Email, in.Password, in.WorkspaceID)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.WorkspaceCreate, _ map[string]json.RawMessage) error {
			return validate.WorkspaceCreate(*in)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.WorkspaceUpdate, _ map[string]json.RawMessage) error {
			return validate.WorkspaceUpdate(*in, nil)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.WorkspaceUserAdd, _ map[string]json.RawMessage) error {
			return validate.WorkspaceUserAdd(*in)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.WorkspaceUserUpdate, _ map[string]json.RawMessage) error {
			return validate.WorkspaceUserUpdate(*in)
		}, nil)
		bodyfuzz.Check(t, body, func(in *data.APIKeyCreate, _ map[string]json.RawMessage) error {
			expires, err := validate.APIKeyCreate(*in, fuzzNow)
			if err == nil && in.Expiration != nil && (expires == nil || !expires.After(fuzzNow)) {
				t.Fatalf("accepted expiration %q gives %v, not a time after now", *in.Expiration, expires)
			}
			return err
		}, nil)
	})
}
