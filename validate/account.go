package validate

import (
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of the account bodies (conventions §5, §6). Strings the spec leaves unbounded get
// a documented maximum (docs/api.md).
const (
	MaxNameLen        = 255
	MaxEmailLen       = 254 // characters; RFC 5321's path limit
	MinPasswordLen    = 8
	MaxPasswordBytes  = 72 // bcrypt reads no further
	MaxDescriptionLen = 1000
	MaxIDListItems    = 1000
	// MaxLiveAPIKeys bounds the API keys a user holds in one workspace that have not
	// expired (login tokens apart), so that a looped create cannot grow the database
	// without end (docs/api.md "API keys").
	MaxLiveAPIKeys = 100
	// MaxLoginTokens bounds the login tokens a user holds (across workspaces, expired
	// ones not yet deleted among them): a login past it deletes the user's oldest, so a
	// login script cannot grow the database without end, and a login never fails for it
	// (docs/api.md "Authentication and tokens").
	MaxLoginTokens = 100
	// ExpiredAPIKeyGrace is how long an expired API key stays listed (as expired) before
	// the token pass deletes it; login tokens go at their expiry.
	ExpiredAPIKeyGrace = 30 * 24 * time.Hour
)

// NormalizeEmail lower-cases and trims an address, so lookups ignore case.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func email(errs *Errors, path, s string) {
	if strings.TrimSpace(s) == "" {
		errs.NotBlank(path, s)
		return
	}
	// Characters, as MaxLen and the document's maxLength count them: a test in bytes here
	// let a value within the characters but past the bytes skip the address check.
	if utf8.RuneCountInString(s) > MaxEmailLen {
		errs.MaxLen(path, s, MaxEmailLen)
		return
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != strings.TrimSpace(s) || !strings.Contains(addr.Address[strings.LastIndex(addr.Address, "@"):], ".") {
		errs.Addf(path, "The %s field must be a valid email address.", path)
	}
}

func password(errs *Errors, path, s string) {
	switch {
	case len([]rune(s)) < MinPasswordLen:
		errs.Addf(path, "The %s field must be at least %d characters.", path, MinPasswordLen)
	case len(s) > MaxPasswordBytes:
		errs.Addf(path, "The %s field must not be greater than %d bytes.", path, MaxPasswordBytes)
	}
}

func name(errs *Errors, path, s string) {
	errs.NotBlank(path, s)
	errs.MaxLen(path, s, MaxNameLen)
}

// UserCreate checks a new account.
func UserCreate(in data.UserCreate) error {
	var errs Errors
	name(&errs, "name", in.Name)
	email(&errs, "email", in.Email)
	password(&errs, "password", in.Password)
	return errs.Err()
}

// UserUpdate checks a profile change: a new password needs the current one.
func UserUpdate(in data.UserUpdate) error {
	var errs Errors
	if in.Name.Set {
		name(&errs, "name", in.Name.V)
	}
	if in.Email.Set {
		email(&errs, "email", in.Email.V)
	}
	if in.Password.Set {
		password(&errs, "password", in.Password.V)
		if !in.CurrentPassword.Set || in.CurrentPassword.V == "" {
			errs.RequiredWhen("current_password", "password is present")
		}
	}
	return errs.Err()
}

// NewPassword checks a password set without the current one (an operator's reset).
func NewPassword(pw string) error {
	var errs Errors
	password(&errs, "password", pw)
	return errs.Err()
}

// Login checks that both credentials are present, and that a workspace_id given is not
// empty (absent or null is the personal workspace).
func Login(emailAddr, pw string, workspaceID *string) error {
	var errs Errors
	errs.NotBlank("email", emailAddr)
	if pw == "" {
		errs.Required("password")
	}
	if workspaceID != nil && strings.TrimSpace(*workspaceID) == "" {
		// It can name no workspace, so saying so reveals nothing (conventions §5).
		errs.Add("workspace_id", "The workspace_id field must be a workspace id; leave it out, or send null, for the personal workspace.")
	}
	return errs.Err()
}

// WorkspaceCreate checks a new workspace.
func WorkspaceCreate(in data.WorkspaceCreate) error {
	var errs Errors
	name(&errs, "name", in.Name)
	errs.MaxLen("description", in.Description, MaxDescriptionLen)
	return errs.Err()
}

// WorkspaceUpdate checks a workspace change; cat is the model catalog the simulation
// setting's model is checked against.
func WorkspaceUpdate(in data.WorkspaceUpdate, cat *data.Catalog) error {
	var errs Errors
	if in.Name.Set {
		name(&errs, "name", in.Name.V)
	}
	if in.Description.Set {
		errs.MaxLen("description", in.Description.V, MaxDescriptionLen)
	}
	if in.Privacy.Set {
		WorkspacePrivacy(&errs, "privacy", in.Privacy.V)
	}
	if in.Simulation.Set && in.Simulation.V != nil {
		SimulationModel(&errs, "simulation", *in.Simulation.V, cat)
	}
	return errs.Err()
}

var datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// APIKeyCreate checks a new API key; it returns the expiry instant (nil for none).
func APIKeyCreate(in data.APIKeyCreate, now time.Time) (*time.Time, error) {
	var errs Errors
	name(&errs, "name", in.Name)
	if in.Scopes != nil {
		if len(in.Scopes) == 0 {
			errs.Add("scopes", "The scopes field must name at least one scope; leave it out for a key with your full rights.")
		}
		errs.MaxItems("scopes", len(in.Scopes), len(data.Scopes))
		oneOfEach(&errs, "scopes", in.Scopes, data.Scopes)
	}
	agentIDs(&errs, "agent_ids", in.AgentIDs)
	var expires *time.Time
	if in.Expiration != nil {
		d, err := time.Parse("2006-01-02", *in.Expiration)
		switch {
		case !datePattern.MatchString(*in.Expiration) || err != nil:
			errs.Add("expiration", "The expiration field must be a date in the format YYYY-MM-DD.")
		case !d.After(now.UTC()):
			errs.Add("expiration", "The expiration field must be a date after today.")
		default:
			expires = &d
		}
	}
	return expires, errs.Err()
}

// oneOfEach checks that every item of list is one of allowed, and appears once.
func oneOfEach(errs *Errors, path string, list, allowed []string) {
	seen := map[string]bool{}
	for i, v := range list {
		p := Index(path, i)
		errs.OneOf(p, v, allowed...)
		if seen[v] {
			errs.Addf(p, "The %s field has a duplicate value.", p)
		}
		seen[v] = true
	}
}

func modules(errs *Errors, path string, list []string) {
	errs.MaxItems(path, len(list), len(data.Modules))
	seen := map[string]bool{}
	for i, m := range list {
		p := Index(path, i)
		errs.OneOf(p, m, data.Modules...)
		if seen[m] {
			errs.Addf(p, "The %s field has a duplicate value.", p)
		}
		seen[m] = true
	}
}

func agentIDs(errs *Errors, path string, list []string) {
	errs.MaxItems(path, len(list), MaxIDListItems)
	seen := map[string]bool{}
	for i, id := range list {
		p := Index(path, i)
		if !data.ValidID(data.PrefixAgent, id) && id != data.NoAgent {
			errs.Addf(p, "The %s field must be an agent id.", p)
		} else if seen[id] {
			errs.Addf(p, "The %s field has a duplicate value.", p)
		}
		seen[id] = true
	}
}

// MemberAgentLimit checks agent_ids against the member's role: owners and admins are
// never limited to some agents (conventions §6), so a non-empty list on them is a fault.
func MemberAgentLimit(errs *Errors, role string, ids []string) {
	if len(ids) > 0 && (role == data.RoleOwner || role == data.RoleAdmin) {
		errs.Addf("agent_ids", "The agent_ids field must be empty when role is %s: owners and admins see every agent.", role)
	}
}

// WorkspaceUserAdd checks the body of adding a member; existence of the user and the
// agents is checked by storage.
func WorkspaceUserAdd(in data.WorkspaceUserAdd) error {
	var errs Errors
	switch id, mail := strings.TrimSpace(in.ID) != "", in.Email != ""; {
	case id && mail:
		errs.Add("email", "The email field is not allowed when id is present: name the user by one of the two.")
	case mail:
		email(&errs, "email", in.Email)
	case !id:
		errs.RequiredWhen("id", "email is not present")
	}
	if in.Role == "" {
		errs.Required("role")
	} else {
		errs.OneOf("role", in.Role, data.Roles...)
	}
	if in.Modules.Set {
		modules(&errs, "modules", in.Modules.V)
	}
	if in.AgentIDs.Set {
		agentIDs(&errs, "agent_ids", in.AgentIDs.V)
		MemberAgentLimit(&errs, in.Role, in.AgentIDs.V)
	}
	return errs.Err()
}

// WorkspaceUserUpdate checks the body of changing a member; agent_ids against a role the
// body does not give is checked with the stored one.
func WorkspaceUserUpdate(in data.WorkspaceUserUpdate) error {
	var errs Errors
	if in.Role.Set {
		errs.OneOf("role", in.Role.V, data.Roles...)
	}
	if in.Modules.Set {
		modules(&errs, "modules", in.Modules.V)
	}
	if in.AgentIDs.Set {
		agentIDs(&errs, "agent_ids", in.AgentIDs.V)
		if in.Role.Set {
			MemberAgentLimit(&errs, in.Role.V, in.AgentIDs.V)
		}
	}
	return errs.Err()
}
