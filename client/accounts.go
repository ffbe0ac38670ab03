package client

import (
	"context"
	"iter"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// AuthService calls the login and logout routes.
type AuthService struct{ c *Client }

// Token is an API key record with its token, which the server shows only once.
type Token struct {
	Key   *data.APIKey
	Token string
	ETag  string
}

// Login exchanges an email and password for a token (workspaceID "" for the personal
// workspace, sent as no workspace_id: the API refuses an empty one). It does not change the
// client's own token: use New with WithToken.
func (s *AuthService) Login(ctx context.Context, email, password, workspaceID string, opts ...RequestOption) (*Token, error) {
	body := map[string]string{"email": email, "password": password}
	if workspaceID != "" {
		body["workspace_id"] = workspaceID
	}
	return s.c.tokenCall(ctx, "login", body, opts)
}

// Logout revokes the client's token.
func (s *AuthService) Logout(ctx context.Context, opts ...RequestOption) error {
	return s.c.noContent(ctx, "logout", nil, nil, opts)
}

func (c *Client) tokenCall(ctx context.Context, op string, body any, opts []RequestOption) (*Token, error) {
	b, err := jsonBody(body)
	if err != nil {
		return nil, err
	}
	res, err := c.do(ctx, request{op: op, body: b, contentType: "application/json", opts: opts})
	if err != nil {
		return nil, err
	}
	t := &Token{}
	t.Key, t.ETag, err = recordWith[data.APIKey](res, "token", &t.Token)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// APIKeysService calls the caller's API key routes.
type APIKeysService struct{ c *Client }

// List returns one page of the caller's API keys.
func (s *APIKeysService) List(ctx context.Context, p data.PageRequest, opts ...RequestOption) ([]*data.APIKey, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "aPIKeyList", query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.APIKey](res)
}

// All iterates over every API key of the caller.
func (s *APIKeysService) All(ctx context.Context, opts ...RequestOption) iter.Seq2[*data.APIKey, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.APIKey, data.Page, error) {
		return s.List(ctx, p, opts...)
	})
}

// Create makes an API key and returns it with its token.
func (s *APIKeysService) Create(ctx context.Context, in data.APIKeyCreate, opts ...RequestOption) (*Token, error) {
	return s.c.tokenCall(ctx, "aPIKeyCreate", in, opts)
}

// Delete revokes one of the caller's API keys.
func (s *APIKeysService) Delete(ctx context.Context, id int64, opts ...RequestOption) error {
	return s.c.noContent(ctx, "aPIKeyDelete", []string{strconv.FormatInt(id, 10)}, nil, opts)
}

// UsersService calls the account routes.
type UsersService struct{ c *Client }

// Me returns the caller's account.
func (s *UsersService) Me(ctx context.Context, opts ...RequestOption) (*data.User, string, error) {
	return getRecord[data.User](ctx, s.c, "me", nil, opts)
}

// UpdateMe changes the caller's name, email or password (only the set fields).
func (s *UsersService) UpdateMe(ctx context.Context, in data.UserUpdate, opts ...RequestOption) (*data.User, string, error) {
	return sendRecord[data.User](ctx, s.c, "meUpdate", nil, in, opts)
}

// List returns one page of every account (instance admins).
func (s *UsersService) List(ctx context.Context, p data.PageRequest, opts ...RequestOption) ([]*data.User, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "userList", query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.User](res)
}

// All iterates over every account (instance admins).
func (s *UsersService) All(ctx context.Context, opts ...RequestOption) iter.Seq2[*data.User, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.User, data.Page, error) {
		return s.List(ctx, p, opts...)
	})
}

// Create makes an account and its personal workspace (instance admins).
func (s *UsersService) Create(ctx context.Context, in data.UserCreate, opts ...RequestOption) (*data.User, string, error) {
	return sendRecord[data.User](ctx, s.c, "userCreate", nil, in, opts)
}

// Get returns an account (instance admins).
func (s *UsersService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.User, string, error) {
	return getRecord[data.User](ctx, s.c, "userShow", []string{id}, opts)
}

// Delete removes an account (instance admins).
func (s *UsersService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "userDelete", []string{id}, nil, opts)
}
