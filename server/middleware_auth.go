package server

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
)

// wrap applies the per-route chain: body limit, authentication, rate limit,
// authorization, If-Match, idempotency, then the handler; an error goes through
// writeError. The rate limit comes before authorization so that a token's refused
// requests count too and carry the X-RateLimit-* headers.
func (s *Server) wrap(rt route) http.Handler {
	limit := rt.BodyLimit
	if limit == 0 {
		limit = s.cfg.MaxJSONBody
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.Long {
			w, r = s.longTransfer(w, r)
		}
		info, _ := r.Context().Value(requestInfoKey).(*requestInfo)
		if info != nil {
			info.route = rt.Path
		}
		if !rt.Public {
			p, err := s.authenticate(r)
			if err == nil {
				err = s.limitToken(w, r, p)
			}
			if err == nil {
				err = pathNamesNoRecord(r) // before authorize, which looks up a {workspace_id}
			}
			if err == nil {
				err = s.authorize(r, p, rt.Need)
			}
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if info != nil {
				info.userID = p.UserID
			}
			ctx := data.WithPrincipal(r.Context(), p)
			// Several If-Match lines are one list (RFC 9110 §5.3).
			if im := strings.Join(r.Header.Values("If-Match"), ", "); im != "" {
				ctx = data.WithIfMatch(ctx, im)
			}
			r = r.WithContext(ctx)
		}
		if rt.NoBody {
			if err := refuseBody(r); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if err := pathNamesNoRecord(r); rt.Public && err != nil {
			s.writeError(w, r, err)
			return
		}
		r, err := checkQuery(rt, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if rt.Idempotent && r.Header.Get("Idempotency-Key") != "" {
			s.idempotent(w, r, rt)
			return
		}
		if queryFaults(r) != nil && rt.Method == http.MethodGet {
			w = &refuseSuccess{ResponseWriter: w, s: s, r: r}
		}
		if err := rt.handle(w, r); err != nil {
			s.writeError(w, r, withQueryFaults(r, err))
		}
	})
	return limitBody(limit, h)
}

// pathNamesNoRecord refuses a path holding U+0000 or bytes that are not UTF-8 as not
// found: no id holds them, and PostgreSQL cannot compare text holding them (a 500, and an
// agent id among the revisions every shared statement of the replica reads).
func pathNamesNoRecord(r *http.Request) error {
	if strings.IndexByte(r.URL.Path, 0) >= 0 || !utf8.ValidString(r.URL.Path) {
		return data.Errorf(data.ENOTFOUND, "Not found: no id holds U+0000 (a NUL character) or bytes that are not UTF-8.")
	}
	return nil
}

// authenticate resolves the bearer token to its principal.
func (s *Server) authenticate(r *http.Request) (*data.Principal, error) {
	header := r.Header.Get("Authorization")
	if header == "" && hasSession(r) {
		return s.authenticateSession(r)
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, data.Errorf(data.EUNAUTHORIZED, "Send a token as Authorization: Bearer <token>.")
	}
	return s.svc.Auth.Authenticate(r.Context(), strings.TrimSpace(token))
}

// authorize checks the route's requirement against p, adjusting p in place. A route with
// a {workspace_id} acts in that workspace, with the caller's membership there; one the
// caller is not a member of is not found.
func (s *Server) authorize(r *http.Request, p *data.Principal, need data.Requirement) error {
	if need.Workspace {
		if wsID := mux.Vars(r)["workspace_id"]; wsID != "" && wsID != p.WorkspaceID {
			m, err := s.svc.WorkspaceUsers.Membership(r.Context(), wsID, p.UserID)
			if err != nil {
				if data.ErrorCode(err) == data.ENOTFOUND {
					return data.NotFound("Workspace")
				}
				return err
			}
			p.ActIn(wsID, m)
		}
		if p.Role == "" {
			return data.Errorf(data.EFORBIDDEN, "This token's user is no longer a member of its workspace.")
		}
	}
	return p.Allows(need)
}
